import ArcaClient
import ArcaKeyring
import ArcaLibTestSupport
import ArcaProtocol
import Foundation
import Testing

@testable import Arca

/// `Keychain` against a real arcad and the real kernel keyring (root: the test
/// starts arcad and acts on root's own vault). Every test uses its own service
/// name, so tests run in parallel without seeing each other's items.
@Suite struct KeychainRootTests {
    struct Profile: Codable, Equatable {
        var name: String
        var tags: [String]
    }

    func keychain(_ name: String = #function) throws -> Keychain {
        Keychain(service: "arca.test.\(name).\(UUID().uuidString)").socketPath(try LiveArcad.socketPath())
    }

    @Test func setAndGetEveryValueType_root() throws {
        let k = try keychain()
        try k.set("s3cr3t ✓", key: "string")
        try k.set(Data([0, 1, 255]), key: "data")
        try k.set([UInt8]([9, 8, 7]), key: "bytes")
        try k.set(true, key: "flag")
        try k.set(Profile(name: "ada", tags: ["a", "b"]), key: "profile")
        #expect(try k.get("string") == "s3cr3t ✓")
        #expect(try k.getData("data") == Data([0, 1, 255]))
        #expect(try k.getBytes("bytes") == [9, 8, 7])
        #expect(try k.getBool("flag") == true)
        #expect(try k.get("profile", as: Profile.self) == Profile(name: "ada", tags: ["a", "b"]))
        #expect(try k.allKeys() == ["bytes", "data", "flag", "profile", "string"])
        try k.removeAll()
    }

    @Test func missingIsNilAndRemoveIsIdempotent_root() throws {
        let k = try keychain()
        #expect(try k.get("absent") == nil)
        #expect(try k.getData("absent") == nil)
        #expect(try k.getBool("absent") == nil)
        #expect(try k.get("absent", as: Profile.self) == nil)
        #expect(try k.contains("absent") == false)
        #expect(try k.attributes(for: "absent") == nil)
        try k.remove("absent")
        #expect(try k.allKeys() == [])
        #expect(try k.allItems() == [])
    }

    @Test func setUpdatesInPlaceKeepingThePersistentReference_root() throws {
        let k = try keychain().label("first")
        try k.set("one", key: "token")
        let before = try #require(try k.attributes(for: "token"))
        try k.label("second").accessibility(.afterFirstUnlock).set("two", key: "token")
        #expect(try k.get("token") == "two")
        let after = try #require(try k.attributes(for: "token"))
        #expect(after.label == "second")
        #expect(after.accessibility == .afterFirstUnlock)
        #expect(after.persistentRef == before.persistentRef)
        #expect(after.creationDate == before.creationDate)
        #expect(try k.allItems().count == 1)
        try k.remove("token")
        #expect(try k.get("token") == nil)
        #expect(try k.contains("token") == false)
    }

    @Test func attributesAndPersistentReferences_root() throws {
        let k = try keychain().comment("note")
        try k.set("v", key: "a")
        let item = try #require(try k.attributes(for: "a"))
        #expect(item.key == "a")
        #expect(item.service == k.service)
        #expect(item.comment == "note")
        #expect(item.accessibility == .whenUnlocked)
        #expect(item.synchronizable == false)
        let created = try #require(item.creationDate)
        #expect(abs(created.timeIntervalSinceNow) < 60)
        let ref = try #require(try k.persistentRef(for: "a"))
        #expect(ref == item.persistentRef)
        #expect(try k.getData(persistentRef: ref) == Data("v".utf8))
        try k.remove("a")
        #expect(try k.getData(persistentRef: ref) == nil)
    }

    @Test func subscripts_root() throws {
        let k = try keychain()
        k["token"] = "abc"
        k[data: "blob"] = Data([1, 2])
        k[bool: "on"] = false
        #expect(k["token"] == "abc")
        #expect(k[data: "blob"] == Data([1, 2]))
        #expect(k[bool: "on"] == false)
        k["token"] = nil
        #expect(k["token"] == nil)
        try k.removeAll()
    }

    @Test func accessGroupsAreNamespaces_root() throws {
        let service = "arca.test.groups.\(UUID().uuidString)"
        let socket = try LiveArcad.socketPath()
        let a = Keychain(service: service, accessGroup: "team.a").socketPath(socket)
        let b = Keychain(service: service, accessGroup: "team.b").socketPath(socket)
        try a.set("for a", key: "k")
        try b.set("for b", key: "k")
        #expect(try a.get("k") == "for a")
        #expect(try b.get("k") == "for b")
        try a.remove("k")
        #expect(try a.get("k") == nil)
        #expect(try b.get("k") == "for b")
        try b.removeAll()
    }

    @Test func internetPasswords_root() throws {
        let k = Keychain(server: "git.example.com", protocolType: .https, authenticationType: .httpBasic)
            .socketPath(try LiveArcad.socketPath())
        let account = "user-\(UUID().uuidString)"
        try k.set("pat", key: account)
        #expect(try k.get(account) == "pat")
        let item = try #require(try k.attributes(for: account))
        #expect(item.server == "git.example.com")
        #expect(item.protocolType == "htps")
        #expect(item.authenticationType == "http")
        try k.remove(account)
        #expect(try k.get(account) == nil)
    }

    @Test func readsComeFromTheKernelAndFallBackToArcad_root() throws {
        let k = try keychain()
        try k.set("fast", key: "k")
        let kernel = try #require(try k.getDataWithSource("k"))
        #expect(kernel.data == Data("fast".utf8))
        #expect(kernel.source == .kernel)
        let socket = try #require(try k.kernelReads(false).getDataWithSource("k"))
        #expect(socket.data == Data("fast".utf8))
        #expect(socket.source == .socket)
        // Larger than a kernel key may be: served by arcad, transparently.
        let big = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0) })
        try k.set(big, key: "big")
        let large = try #require(try k.getDataWithSource("big"))
        #expect(large.data == big)
        #expect(large.source == .socket)
        try k.removeAll()
        #expect(try k.getDataWithSource("k") == nil)
    }

    @Test func lockedIsAnErrorNeverNil_root() throws {
        let k = Keychain(service: "arca.test.locked").socketPath(try LiveArcad.startWithoutVault())
        #expect(throws: KeychainError.self) { try k.get("k") }
        do {
            _ = try k.get("k")
        } catch {
            #expect(error.code == .interactionNotAllowed)
            #expect(error.status == -25308)
        }
        do {
            try k.set("v", key: "k")
            Issue.record("set succeeded on a locked vault")
        } catch {
            #expect(error.code == .interactionNotAllowed)
        }
        do {
            _ = try k.contains("k")
            Issue.record("contains succeeded on a locked vault")
        } catch {
            #expect(error.code == .interactionNotAllowed)
        }
    }

    @Test func manyTasksReadAndWriteAtOnce_root() async throws {
        let k = try keychain()
        let tasks = 32
        let rounds = 20
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    for r in 0..<rounds {
                        let key = "k\(t % 8)"
                        try k.set("t\(t)r\(r)", key: "own\(t)")
                        #expect(try k.get("own\(t)") == "t\(t)r\(r)")
                        try k.set("shared-\(t)", key: key)
                        let shared = try #require(try k.get(key))
                        #expect(shared.hasPrefix("shared-"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try k.allKeys().count == tasks + 8)
        try k.removeAll()
        #expect(try k.allKeys() == [])
    }
}

/// `Keychain.system`: root writes the system vault; a granted uid (root here)
/// reads from its persistent keyring first.
@Suite struct SystemKeychainRootTests {
    @Test func systemKeychainReadsThePersistentKeyringFirst_root() throws {
        let socket = try LiveArcad.socketPath()
        let service = "arca.test.system.\(UUID().uuidString)"
        let k = Keychain.system(service: service).socketPath(socket)
        try k.set("svc", key: "db")
        // Deleting the item also takes it out of root's persistent keyring.
        defer { try? k.removeAll() }
        // Root may read every system item over the socket; nothing is granted yet.
        let before = try #require(try k.getDataWithSource("db"))
        #expect(before.data == Data("svc".utf8))
        #expect(before.source == .socket)
        let query = Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string("db")])
        #expect(try ArcadClient(path: socket).send(.grant(query: query, principals: [.user(0)])) == .ok)
        let granted = try #require(try k.getDataWithSource("db"))
        #expect(granted.data == Data("svc".utf8))
        #expect(granted.source == .kernel)
        // The user's own vault does not see system items.
        #expect(try Keychain(service: service).socketPath(socket).get("db") == nil)
        try k.remove("db")
        #expect(try k.getDataWithSource("db") == nil)
    }
}
