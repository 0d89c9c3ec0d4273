import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaDaemon

/// The per-item kernel writes against the real keyring: a one-item update in a
/// 50-item vault leaves every other key, and the ring, exactly where they were.
/// (Before, every update rebuilt the ring: a new ring serial and 50 new key serials.)
@Suite("in-process arcad, real keyring: one-item writes keep the rest of the ring (root)", .serialized)
struct DaemonItemKernelRootTests {
    /// The ring's item keys, description → serial, as root sees them (root owns them).
    func keys(_ ring: KeySerial) throws -> [String: Int32] {
        var found: [String: Int32] = [:]
        for serial in try ring.links() {
            let described = try run(["keyctl", "rdescribe", "\(serial.rawValue)"])
            // An invalidated key stays linked until the kernel's garbage collector runs.
            if described.stderr.contains("Required key not available") { continue }
            guard described.status == 0, let description = described.stdout.split(separator: ";").last else {
                throw TestSupportError("keyctl rdescribe \(serial.rawValue): \(described.stderr)")
            }
            found[String(description)] = serial.rawValue
        }
        return found
    }

    func update(_ daemon: Daemon, _ uid: UInt32, _ account: String, _ attributes: AttributeMap, secret: String?)
        -> Reply
    {
        var request = Request.update(
            UpdateRequest(
                vault: .user(uid: uid), query: Query(itemClass: .genericPassword, attributes: genp("svc", account)),
                attributes: attributes, secret: secret.map { Array($0.utf8) }))
        return daemon.handle(&request, from: PeerCredentials(pid: 1, uid: uid, gid: uid))
    }

    @Test("a new secret and an account rename change one key each; the ring and 49 other keys keep their serials")
    func oneKeyPerWrite() throws {
        try withThrowawayUsers(1, prefix: "kernel1", cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
            let uid = users[0].uid
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("arcad-kernel1-\(UUID().uuidString)").path
            var config = DaemonConfig()
            config.stateDirectory = directory
            let daemon = try Daemon(config: config, kernel: KernelKeyring(stateDirectory: directory))
            defer {
                var lockAll = Request.lockAll
                _ = daemon.handle(&lockAll, from: PeerCredentials(pid: 1, uid: 0, gid: 0))
                removeParkedKeys(stateDirectory: directory)
                try? FileManager.default.removeItem(atPath: directory)
            }
            func send(_ request: Request, as peer: UInt32) -> Reply {
                var request = request
                return daemon.handle(&request, from: PeerCredentials(pid: 1, uid: peer, gid: peer))
            }
            #expect(send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
            for i in 0..<50 { #expect(send(addRequest(uid, "svc", "a\(i)", "s\(i)"), as: uid) == .items([])) }
            let ringBefore = try KeyringLayout().ring(user: uid, class: .whenUnlocked)
            guard let ring = ringBefore else {
                Issue.record("no arca:wu ring in @u of \(uid)")
                return
            }
            let before = try keys(ring)
            #expect(before.count == 50)

            // A new secret for a7: one new key, everything else as it was.
            #expect(update(daemon, uid, "a7", [:], secret: "new7") == .ok)
            #expect(try KeyringLayout().ring(user: uid, class: .whenUnlocked) == ring)
            let afterSecret = try keys(ring)
            #expect(afterSecret.count == 50)
            #expect(afterSecret.filter { $0.value != before[$0.key] }.map(\.key) == ["arca:genp:svc:a7"])
            let a7 = afterSecret["arca:genp:svc:a7"] ?? 0
            #expect(try run(["keyctl", "print", "\(a7)"]).stdout == "new7")
            #expect(try run(["keyctl", "print", "\(before["arca:genp:svc:a7"] ?? 0)"]).status == 1)

            // An account rename: a8's key leaves, b8's arrives with the kept secret.
            #expect(update(daemon, uid, "a8", [.account: .string("b8")], secret: nil) == .ok)
            #expect(try KeyringLayout().ring(user: uid, class: .whenUnlocked) == ring)
            let afterRename = try keys(ring)
            #expect(afterRename.count == 50)
            #expect(afterRename["arca:genp:svc:a8"] == nil)
            #expect(try run(["keyctl", "print", "\(afterRename["arca:genp:svc:b8"] ?? 0)"]).stdout == "s8")
            #expect(try run(["keyctl", "print", "\(before["arca:genp:svc:a8"] ?? 0)"]).status == 1)
            #expect(try run(["keyctl", "search", "\(ring.rawValue)", "user", "arca:genp:svc:a8"]).status == 1)
            #expect(
                afterRename.filter { $0.key != "arca:genp:svc:b8" && $0.value != afterSecret[$0.key] }.isEmpty)
        }
    }
}
