import ArcaClient
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

/// The per-user event stream over arcad's real socket: a long poll outlives the
/// server's client timeout, wakes on a change made by another connection, and the
/// attribute-item requests work end to end. Root only; throwaway users.
@Suite("arcad binary: event stream and attribute items (root, real socket)", .serialized)
struct ArcadEventStreamTests {
    func purge(_ user: TestUser) { try? KeyringLayout().purge(user: user.uid) }

    @Test("a waiting listener hears of an item added by another connection; an idle wait ends empty, not cut")
    func longPoll() throws {
        try withThrowawayUsers(1, prefix: "secretd", cleanup: purge) { users in
            let alice = users[0]
            // A wait longer than the client timeout: the timeout is for silent clients, not waiting ones.
            let arcad = try ArcadProcess(config: "client_timeout_ms = 500\n")
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            let listener = try ArcadClient(path: arcad.socket, timeoutMilliseconds: 10_000)
            guard
                case .events(let start) = try listener.send(
                    .waitEvents(uid: alice.uid, after: 0, timeoutMilliseconds: 0))
            else {
                Issue.record("no events reply")
                return
            }
            let began = Date()
            let idle = try listener.send(.waitEvents(uid: alice.uid, after: start.next, timeoutMilliseconds: 1500))
            #expect(idle == .events(EventBatch(next: start.next, missed: false, events: [])))
            #expect(Date().timeIntervalSince(began) >= 1.4)

            let heard = Mutex<Reply?>(nil)
            // The client is handed to the thread: this one does not use it again.
            nonisolated(unsafe) let handedOff = listener
            let thread = Thread {
                let reply = try? handedOff.send(
                    .waitEvents(uid: alice.uid, after: start.next, timeoutMilliseconds: 8000))
                heard.withLock { $0 = reply }
            }
            thread.start()
            usleep(300_000)
            // Another client (the user's own `arca`, here the probe as alice) adds a Keychain item.
            #expect(try alice.probe(arcad.socket, "add", "\(alice.uid)", "web", "alice", stdin: "hunter2\n") == "ok")
            var waited = 0
            while heard.withLock({ $0 }) == nil, waited < 5000 {
                usleep(20_000)
                waited += 20
            }
            guard case .events(let batch)? = heard.withLock({ $0 }) else {
                Issue.record("the listener heard nothing")
                return
            }
            #expect(batch.events.count == 1)
            if case .itemAdded(let reference)? = batch.events.first {
                #expect(reference.count == 16)
            } else {
                Issue.record("expected itemAdded, got \(batch.events)")
            }
        }
    }

    @Test("attribute items over the socket: add, search, a twin, replace, locked list after lock")
    func attributeItems() throws {
        try withThrowawayUsers(1, prefix: "secretd", cleanup: purge) { users in
            let alice = users[0]
            let arcad = try ArcadProcess(config: "secret_service_class = when-unlocked\n")
            defer { arcad.stop() }
            let key = try derive("pw")
            #expect(try arcad.send(.enroll(uid: alice.uid, key: key, parameters: e2eParameters)) == .ok)
            func add(_ secret: String, replace: Bool) throws -> AttributeItemInfo? {
                let reply = try arcad.send(
                    .addAttributeItem(
                        AttributeItemAdd(
                            uid: alice.uid, label: "git", attributes: ["server": "example.org", "user": "ä l"],
                            contentType: "text/plain", secret: Array(secret.utf8), replace: replace)))
                guard case .attributeItems(let list) = reply else { return nil }
                return list.items.first
            }
            let first = try #require(try add("one", replace: false))
            let twin = try #require(try add("two", replace: false))
            #expect(first.reference != twin.reference && first.accessible == .whenUnlocked)
            let replaced = try #require(try add("three", replace: true))
            #expect(replaced.reference == first.reference)
            let search = Request.searchAttributeItems(uid: alice.uid, attributes: ["user": "ä l"], returnSecrets: true)
            guard case .attributeItems(let found) = try arcad.send(search) else {
                Issue.record("no list")
                return
            }
            #expect(found.items.map(\.reference) == [first.reference, twin.reference])
            #expect(found.items.map { String(decoding: $0.secret ?? [], as: UTF8.self) } == ["three", "two"])
            #expect(try arcad.send(.lock(uid: alice.uid, classes: .whenUnlocked)) == .ok)
            #expect(
                try arcad.send(search)
                    == .attributeItems(
                        AttributeItemList(items: [], locked: [first.reference, twin.reference])))
            #expect(try arcad.send(.lock(uid: alice.uid, classes: .all)) == .ok)
            guard case .error(let status, _) = try arcad.send(search) else {
                Issue.record("searching with nothing held must fail")
                return
            }
            #expect(status == .interactionNotAllowed)
        }
    }
}
