import ArcaClient
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

/// Group commit in the shipped arcad: SIGKILL in the middle of a burst of adds from
/// several connections at once (which share commits) loses no acknowledged item.
/// Root only; a throwaway user owns the vault.
@Suite("arcad binary: SIGKILL during concurrent adds (root, real kernel)", .serialized)
struct ArcadGroupCommitTests {
    func purge(_ user: TestUser) { _ = KeyringLayout().purge(user: user.uid) }

    static func attributeAdd(_ uid: UInt32, _ n: Int) -> Request {
        .addAttributeItem(
            AttributeItemAdd(
                uid: uid, label: "burst \(n)", attributes: ["burst": "1", "n": String(n)], contentType: "text/plain",
                secret: Array("s\(n)".utf8), replace: false))
    }

    @Test("SIGKILL during adds from 6 connections at once: every acknowledged item is there, with its secret")
    func killDuringConcurrentAdds() throws {
        try withThrowawayUsers(1, prefix: "arcagc", cleanup: purge) { users in
            let alice = users[0]
            let arcad = try ArcadProcess(prefix: "arcad-groupcommit")
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            let acknowledged = Mutex<[Int: [UInt8]]>([:])
            let socket = arcad.socket
            for round in 0..<6 {
                let done = DispatchGroup()
                for writer in 0..<6 {
                    done.enter()
                    Thread {
                        defer { done.leave() }
                        guard let client = try? ArcadClient(path: socket, timeoutMilliseconds: 10_000) else { return }
                        var n = round * 1_000_000 + writer * 100_000
                        // Until arcad dies: an add answered with its item was acknowledged.
                        while case .attributeItems(let list)? = try? client.send(Self.attributeAdd(alice.uid, n)),
                            let item = list.items.first
                        {
                            acknowledged.withLock { $0[n] = item.reference }
                            n += 1
                        }
                    }.start()
                }
                usleep(UInt32.random(in: 100_000...400_000))
                arcad.kill9()
                done.wait()
                try arcad.start()
            }
            let expected = acknowledged.withLock { $0 }
            #expect(expected.count > 100)
            // Read back by reference, 500 at a time (the vault is unlocked again from its parked keys).
            let references = Array(expected.values)
            var stored: [[UInt8]: AttributeItemInfo] = [:]
            for start in stride(from: 0, to: references.count, by: 500) {
                let chunk = Array(references[start..<min(start + 500, references.count)])
                guard
                    case .attributeItems(let list) = try arcad.send(
                        .getAttributeItems(uid: alice.uid, references: chunk, returnSecrets: true))
                else {
                    Issue.record("no reply for a chunk of references")
                    continue
                }
                #expect(list.locked.isEmpty)
                for item in list.items { stored[item.reference] = item }
            }
            let missing = expected.filter { stored[$0.value] == nil }.keys.sorted()
            #expect(missing.isEmpty, "acknowledged but missing: \(missing.prefix(10)) of \(missing.count)")
            for (n, reference) in expected {
                guard let item = stored[reference] else { continue }
                #expect(item.secret == Array("s\(n)".utf8) && item.attributes["n"] == String(n))
            }
        }
    }
}
