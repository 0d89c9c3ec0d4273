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

    /// Runs `body` with a throwaway user enrolled in an in-process arcad over the real
    /// keyring, and a way to send it requests; everything removed afterwards.
    func withRealKernel(
        _ prefix: String, _ body: (UInt32, Daemon, (Request, UInt32) -> Reply) throws -> Void
    ) throws {
        try withThrowawayUsers(1, prefix: prefix, cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
            let uid = users[0].uid
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("arcad-\(prefix)-\(UUID().uuidString)").path
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
            try body(uid, daemon, send)
        }
    }

    @Test("a new secret and an account rename change one key each; the ring and 49 other keys keep their serials")
    func oneKeyPerWrite() throws {
        try withRealKernel("kernel1") { uid, daemon, send in
            for i in 0..<50 { #expect(send(addRequest(uid, "svc", "a\(i)", "s\(i)"), uid) == .items([])) }
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

    /// Before, every merged batch rebuilt the ring (`republishLoaded`): a new ring serial and
    /// 50 new key serials for one incoming record.
    @Test("an incoming record for one item of 50 changes one key; the ring and the 49 other keys keep their serials")
    func oneKeyPerIncomingRecord() throws {
        try withRealKernel("kernel17") { uid, _, send in
            // The other machine of the circle, over the kernel twin (the same person: the same uid).
            let sender = try TestDaemon()
            defer { sender.cleanUp() }
            _ = try enrolled(sender, uid)
            guard case .syncDevice(let a) = sender.send(.syncInit(uid: uid), as: uid),
                case .syncDevice(let b) = send(.syncJoin(uid: uid, approver: a), uid),
                case .syncApproval(_, let sas) = sender.send(
                    .syncApprove(uid: uid, device: b, shortAuthenticationString: nil), as: uid),
                case .syncApproval(let approval, _) = sender.send(
                    .syncApprove(uid: uid, device: b, shortAuthenticationString: sas), as: uid),
                !approval.isEmpty
            else {
                Issue.record("no circle")
                return
            }
            /// The other machine's files pushed here, as the agent would; how many records applied.
            func carry() -> Int? {
                let files = agentFiles(sender.send(.syncPull(uid: uid, after: 0), as: uid), for: b)
                guard case .syncPushResult(let outcomes) = send(.syncPush(uid: uid, files: files), uid) else {
                    return nil
                }
                return zip(files, outcomes).filter { $0.kind == .record && $1.code == .applied }.count
            }
            func synced(_ account: String) -> AttributeMap {
                var attributes = genp("svc", account)
                attributes[.synchronizable] = .bool(true)
                return attributes
            }
            #expect(carry() != nil)  // the approval: joined
            for i in 0..<50 {
                let add = AddRequest(
                    vault: .user(uid: uid), itemClass: .genericPassword, attributes: synced("a\(i)"),
                    secret: Array("s\(i)".utf8))
                #expect(sender.send(.add(add), as: uid) == .items([]))
            }
            #expect(carry() == 50)
            guard let ring = try KeyringLayout().ring(user: uid, class: .whenUnlocked) else {
                Issue.record("no arca:wu ring in @u of \(uid)")
                return
            }
            let before = try keys(ring)
            #expect(before.count == 50)

            // A new secret for a7 on the other machine: one new key here, everything else as it was.
            let update = UpdateRequest(
                vault: .user(uid: uid), query: Query(itemClass: .genericPassword, attributes: synced("a7")),
                attributes: [:], secret: Array("new7".utf8))
            #expect(sender.send(.update(update), as: uid) == .ok)
            #expect(carry() == 1)
            #expect(try KeyringLayout().ring(user: uid, class: .whenUnlocked) == ring)
            let afterRecord = try keys(ring)
            #expect(afterRecord.count == 50)
            #expect(afterRecord.filter { $0.value != before[$0.key] }.map(\.key) == ["arca:genp:svc:a7:sync"])
            #expect(try run(["keyctl", "print", "\(afterRecord["arca:genp:svc:a7:sync"] ?? 0)"]).stdout == "new7")
            #expect(try run(["keyctl", "print", "\(before["arca:genp:svc:a7:sync"] ?? 0)"]).status == 1)

            // A delete there: a8's key leaves, the 49 others stay.
            let query = Query(itemClass: .genericPassword, attributes: synced("a8"))
            #expect(sender.send(.delete(vault: .user(uid: uid), query: query), as: uid) == .ok)
            #expect(carry() == 1)
            #expect(try KeyringLayout().ring(user: uid, class: .whenUnlocked) == ring)
            let afterDelete = try keys(ring)
            #expect(afterDelete.count == 49)
            #expect(afterDelete["arca:genp:svc:a8:sync"] == nil)
            #expect(try run(["keyctl", "print", "\(before["arca:genp:svc:a8:sync"] ?? 0)"]).status == 1)
            #expect(afterDelete.filter { $0.value != afterRecord[$0.key] }.isEmpty)
        }
    }
}
