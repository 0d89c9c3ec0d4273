import ArcaCrypto
import ArcaProtocol
import Foundation
import Synchronization
import Testing

@testable import ArcaDaemon

/// arcad's attribute-item requests and the per-user event stream, in process with
/// the kernel twin (root: key parking uses root's real keyring).
@Suite("in-process arcad: attribute items and events (root)", .serialized)
struct AttributeItemDaemonTests {
    let alice: UInt32 = 60_011
    let bob: UInt32 = 60_012

    func enrolled(_ t: TestDaemon, _ uid: UInt32) throws -> [UInt8] {
        let key = try derivedKey("pw")
        #expect(t.send(.enroll(uid: uid, key: key, parameters: testParameters), as: 0) == .ok)
        return key
    }

    func add(
        _ t: TestDaemon, _ uid: UInt32, _ attributes: SecretAttributes, secret: String = "s",
        replace: Bool = false, as peer: UInt32? = nil
    ) -> Reply {
        t.send(
            .addAttributeItem(
                AttributeItemAdd(
                    uid: uid, label: "label", attributes: attributes, contentType: "text/plain",
                    secret: Array(secret.utf8), replace: replace)), as: peer ?? uid)
    }

    func items(_ reply: Reply) -> AttributeItemList? {
        if case .attributeItems(let list) = reply { return list }
        return nil
    }

    @Test("add, search, get, update and delete; the default class is afterFirstUnlock and stays out of the kernel")
    func lifecycle() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        guard let added = items(add(t, alice, ["xdg:schema": "org.x", "user": "Zoë"], secret: "pw"))?.items.first
        else {
            Issue.record("no item")
            return
        }
        #expect(added.accessible == .afterFirstUnlock)
        #expect(added.attributes == ["xdg:schema": "org.x", "user": "Zoë"])
        #expect(added.secret == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
        let found = items(
            t.send(
                .searchAttributeItems(uid: alice, attributes: ["user": "Zoë"], returnSecrets: true),
                as: alice))
        #expect(found?.items.map(\.reference) == [added.reference])
        #expect(found?.items.first?.secret == Array("pw".utf8))
        #expect(
            items(
                t.send(
                    .searchAttributeItems(uid: alice, attributes: ["user": "zoë"], returnSecrets: false),
                    as: alice)) == AttributeItemList(items: []))
        let unknown = [UInt8](repeating: 9, count: 16)
        let got = items(
            t.send(
                .getAttributeItems(
                    uid: alice, references: [unknown, added.reference, [1]],
                    returnSecrets: false), as: alice))
        #expect(got?.items.map(\.reference) == [added.reference])
        let updated = items(
            t.send(
                .updateAttributeItem(
                    AttributeItemUpdate(uid: alice, reference: added.reference, label: "new", secret: Array("pw2".utf8))
                ),
                as: alice))
        #expect(updated?.items.first?.label == "new")
        #expect(updated?.items.first?.attributes == added.attributes)
        #expect(t.send(.deleteAttributeItem(uid: alice, reference: added.reference), as: alice) == .ok)
        #expect(statusCode(t.send(.deleteAttributeItem(uid: alice, reference: added.reference), as: alice)) == -25300)
        #expect(statusCode(t.send(.deleteAttributeItem(uid: alice, reference: [1, 2]), as: alice)) == -25300)
    }

    @Test("secret_service_class = when-unlocked makes new items whenUnlocked")
    func configuredClass() throws {
        var config = DaemonConfig()
        config.secretServiceClass = .whenUnlocked
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        #expect(items(add(t, alice, ["k": "v"]))?.items.first?.accessible == .whenUnlocked)
        #expect(try DaemonConfig.parse("secret_service_class = when-unlocked").secretServiceClass == .whenUnlocked)
        #expect(
            throws: ConfigError(
                location: "/etc/arca/arca.conf:1",
                message: "secret_service_class must be 'after-first-unlock' or 'when-unlocked', got 'always'")
        ) {
            _ = try DaemonConfig.parse("secret_service_class = always")
        }
    }

    @Test("attack: another user can neither read, search, change, delete nor listen to alice's items")
    func otherUsersAreRefused() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = try enrolled(t, bob)
        guard let ref = items(add(t, alice, ["k": "v"]))?.items.first?.reference else {
            Issue.record("no item")
            return
        }
        let attacks: [Request] = [
            .addAttributeItem(AttributeItemAdd(uid: alice, label: "", attributes: [:], contentType: "", secret: [])),
            .searchAttributeItems(uid: alice, attributes: [:], returnSecrets: true),
            .getAttributeItems(uid: alice, references: [ref], returnSecrets: true),
            .updateAttributeItem(AttributeItemUpdate(uid: alice, reference: ref, secret: [1])),
            .deleteAttributeItem(uid: alice, reference: ref),
            .waitEvents(uid: alice, after: 0, timeoutMilliseconds: 0),
            .searchAttributeReferences(uid: alice, attributes: [:]),
            .collectionSettings(uid: alice, label: nil),
            .collectionSettings(uid: alice, label: "owned by bob"),
        ]
        for attack in attacks { #expect(statusCode(t.send(attack, as: bob)) == -34018) }
        // Bob's own search does not see alice's item.
        #expect(
            items(t.send(.searchAttributeItems(uid: bob, attributes: [:], returnSecrets: false), as: bob))
                == AttributeItemList(items: []))
        #expect(
            items(t.send(.getAttributeItems(uid: alice, references: [ref], returnSecrets: true), as: alice))?
                .items.first?.secret == Array("s".utf8))
        #expect(
            t.send(.collectionSettings(uid: alice, label: nil), as: alice)
                == .collectionSettings(CollectionSettings(label: "Login", accessible: .afterFirstUnlock)))
    }

    @Test("references: the matches of a search without their attributes; locked ones listed as locked")
    func references() throws {
        var config = DaemonConfig()
        config.secretServiceClass = .whenUnlocked
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let refs = ["a", "b", "a"].compactMap { items(add(t, alice, ["k": $0, "n": "1"]))?.items.first?.reference }
        #expect(refs.count == 3)
        #expect(
            t.send(.searchAttributeReferences(uid: alice, attributes: ["k": "a"]), as: alice)
                == .attributeReferences(AttributeReferenceList(unlocked: [refs[0], refs[2]])))
        #expect(
            t.send(.searchAttributeReferences(uid: alice, attributes: ["k": "A"]), as: alice)
                == .attributeReferences(AttributeReferenceList(unlocked: [])))
        #expect(
            t.send(.searchAttributeReferences(uid: alice, attributes: [:]), as: alice)
                == .attributeReferences(AttributeReferenceList(unlocked: refs)))
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(
            t.send(.searchAttributeReferences(uid: alice, attributes: ["n": "1"]), as: alice)
                == .attributeReferences(AttributeReferenceList(unlocked: [], locked: refs)))
        #expect(
            t.send(.searchAttributeReferences(uid: alice, attributes: [:]), as: alice)
                == .attributeReferences(AttributeReferenceList(unlocked: [], locked: refs)))
        #expect(t.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        #expect(statusCode(t.send(.searchAttributeReferences(uid: alice, attributes: [:]), as: alice)) == -25308)
    }

    @Test("the collection's label is kept in the vault (locked or not); the class is secret_service_class")
    func collectionSettings() throws {
        var config = DaemonConfig()
        config.secretServiceClass = .whenUnlocked
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        #expect(
            t.send(.collectionSettings(uid: alice, label: "Töday's 🔑"), as: alice)
                == .collectionSettings(CollectionSettings(label: "Töday's 🔑", accessible: .whenUnlocked)))
        #expect(t.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        #expect(
            t.send(.collectionSettings(uid: alice, label: nil), as: alice)
                == .collectionSettings(CollectionSettings(label: "Töday's 🔑", accessible: .whenUnlocked)))
        #expect(statusCode(t.send(.collectionSettings(uid: bob, label: nil), as: bob)) != 0)
    }

    @Test("locked: whenUnlocked items come back in the locked list; with no key held, locked (-25308)")
    func locked() throws {
        var config = DaemonConfig()
        config.secretServiceClass = .whenUnlocked
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        guard let ref = items(add(t, alice, ["k": "v"]))?.items.first?.reference else {
            Issue.record("no item")
            return
        }
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        let search = Request.searchAttributeItems(uid: alice, attributes: ["k": "v"], returnSecrets: true)
        #expect(items(t.send(search, as: alice)) == AttributeItemList(items: [], locked: [ref]))
        #expect(
            items(t.send(.getAttributeItems(uid: alice, references: [ref], returnSecrets: true), as: alice))
                == AttributeItemList(items: [], locked: [ref]))
        #expect(t.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        #expect(statusCode(t.send(search, as: alice)) == -25308)
        #expect(t.send(.unlock(uid: alice, key: key), as: alice) == .ok)
        #expect(items(t.send(search, as: alice))?.items.map(\.reference) == [ref])
    }

    @Test("events: adds, changes and deletes by any client, and lock changes, in order")
    func events() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        guard case .events(let start) = t.send(.waitEvents(uid: alice, after: 0, timeoutMilliseconds: 0), as: alice)
        else {
            Issue.record("no events reply")
            return
        }
        guard let ref = items(add(t, alice, ["k": "v"]))?.items.first?.reference else { return }
        _ = add(t, alice, ["k": "v"], secret: "2", replace: true)
        _ = t.send(addRequest(alice, "mail", "alice", "x"), as: alice)  // a Keychain item, as `arca add` does
        _ = t.send(.deleteAttributeItem(uid: alice, reference: ref), as: alice)
        _ = t.send(.lock(uid: alice, classes: .all), as: alice)
        _ = t.send(.unlock(uid: alice, key: key), as: alice)
        guard
            case .events(let batch) = t.send(
                .waitEvents(uid: alice, after: start.next, timeoutMilliseconds: 0),
                as: alice)
        else {
            Issue.record("no events reply")
            return
        }
        #expect(batch.missed == false)
        #expect(batch.events.count == 6)
        #expect(Array(batch.events.prefix(2)) == [.itemAdded(reference: ref), .itemChanged(reference: ref)])
        if case .itemAdded(let keychainRef) = batch.events[2] {
            #expect(keychainRef.count == 16)
        } else {
            Issue.record("expected a Keychain add, got \(batch.events[2])")
        }
        #expect(
            Array(batch.events.suffix(3)) == [
                .itemDeleted(reference: ref), .lockChanged(unlocked: []), .lockChanged(unlocked: .all),
            ])
        #expect(batch.next == start.next + 6)
        // Nothing new: an empty batch after the timeout, numbered as asked.
        #expect(
            t.send(.waitEvents(uid: alice, after: batch.next, timeoutMilliseconds: 10), as: alice)
                == .events(EventBatch(next: batch.next, missed: false, events: [])))
        // A number from another arcad (before this one started) is told it missed events.
        guard case .events(let stale) = t.send(.waitEvents(uid: alice, after: 1, timeoutMilliseconds: 0), as: alice)
        else { return }
        #expect(stale.missed == true && stale.next == batch.next)
    }

    @Test("a waiting listener wakes when another client adds an item")
    func waiterWakes() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        guard case .events(let start) = t.send(.waitEvents(uid: alice, after: 0, timeoutMilliseconds: 0), as: alice)
        else { return }
        let result = Mutex<Reply?>(nil)
        let thread = Thread {
            let reply = t.send(.waitEvents(uid: alice, after: start.next, timeoutMilliseconds: 20_000), as: alice)
            result.withLock { $0 = reply }
        }
        thread.start()
        usleep(200_000)
        #expect(result.withLock { $0 } == nil)  // still waiting
        guard let ref = items(add(t, alice, ["k": "v"]))?.items.first?.reference else { return }
        var waited = 0
        while result.withLock({ $0 }) == nil, waited < 5_000 {
            usleep(10_000)
            waited += 10
        }
        #expect(
            result.withLock { $0 }
                == .events(
                    EventBatch(
                        next: start.next + 1, missed: false,
                        events: [.itemAdded(reference: ref)])))
    }
}
