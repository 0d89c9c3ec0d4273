import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon
@testable import ArcaVault

/// The outbox seals the rows a request changed (`sync_pending`), not a comparison of the
/// whole vault; a change is sealed exactly once, whichever path made it and whenever.
@Suite("arcad sync outbox (root)", .serialized)
struct SyncOutboxDaemonTests {
    let alice: UInt32 = 60_193

    func pending(_ circle: SyncCircle, _ index: Int) throws -> [[UInt8]] {
        try circle.machines[index].daemon.context(alice).withLock { state throws(HandlerError) -> [[UInt8]] in
            do { return try state.vault?.pendingSyncChanges() ?? [] } catch { throw HandlerError.vault(error) }
        }
    }

    /// Runs `body` on machine `index`'s vault directly, as a write whose follow-up never ran
    /// (arcad stopped between the vault's commit and the seal).
    func behindArcad(_ circle: SyncCircle, _ index: Int, _ body: (Vault) throws -> Void) throws {
        try circle.machines[index].daemon.context(alice).withLock { state throws(HandlerError) in
            guard let vault = state.vault else { throw HandlerError(.internalComponent, "no vault") }
            do { try body(vault) } catch { throw HandlerError.vault(error) }
        }
    }

    func secretBytes(_ text: String) throws -> SecretBytes {
        var bytes = Array(text.utf8)
        return try SecretBytes(consuming: &bytes)
    }

    func syncedQuery(_ service: String) -> ArcaVault.Query {
        var a = ItemAttributes()
        a.service = service
        a.account = "alice"
        return ArcaVault.Query(.genericPassword, attributes: a, synchronizable: .yes)
    }

    /// Two machines; `items` (service, secret, class) added on A and carried to B.
    func circle(with items: [(String, String, ArcaProtocol.Accessibility?)]) throws -> SyncCircle {
        let circle = try SyncCircle(uid: alice, count: 2)
        for (service, secret, accessible) in items { circle.addSynced(0, service, secret, accessible: accessible) }
        circle.carry(0, 1)
        return circle
    }

    @Test("an update seals its own item even when another synchronizable item cannot be decrypted")
    func anUpdateReadsOnlyItsRows() throws {
        let circle = try circle(with: [("mail", "m1", nil), ("chat", "c1", nil)])
        defer { circle.cleanUp() }
        #expect(circle.synced(1, "mail") == "m1")
        #expect(try pending(circle, 0) == [] && pending(circle, 1) == [])
        // Chat's attributes no longer open: a comparison of every item fails on it (main did
        // one after every update, and sealed nothing); the update of mail reads mail's row only.
        try behindArcad(circle, 0) { vault in
            let chat = PortableItem(
                itemClass: .genericPassword, attributes: syncedQuery("chat").attributes,
                secret: try SecretBytes(count: 0))
            let tag = try vault.primaryKeyTag(of: chat)
            try vault.db.statement("UPDATE items SET meta = zeroblob(length(meta)) WHERE pk = ?").bind(.blob(tag)).run()
        }
        #expect(circle.updateSynced(0, "mail", "m2") == .ok)
        #expect(try pending(circle, 0) == [])
        let outcomes = circle.carry(0, 1)
        #expect(outcomes.filter { $0.code == .applied }.count == 2)  // the edit and the head
        #expect(circle.synced(1, "mail") == "m2")
        #expect(circle.status(0)?.seq == 3)
    }

    @Test("a change committed without its seal (a crash) is sealed by the next request, once")
    func aChangeLeftPendingIsSealedLater() throws {
        let circle = try circle(with: [("mail", "m1", nil), ("gone", "g1", nil)])
        defer { circle.cleanUp() }
        try behindArcad(circle, 0) { vault in
            try vault.update(syncedQuery("mail"), changes: ItemAttributes(), secret: try secretBytes("m2"))
            try vault.delete(syncedQuery("gone"))
        }
        #expect(try pending(circle, 0).count == 2)
        #expect(circle.status(0)?.seq == 2)
        // Any request that follows up on sync: a new item here.
        circle.addSynced(0, "new", "n1")
        #expect(try pending(circle, 0) == [])
        #expect(circle.status(0)?.seq == 5)  // the edit, the tombstone, the creation: each once
        circle.carry(0, 1)
        #expect(circle.synced(1, "mail") == "m2")
        #expect(circle.synced(1, "gone") == "error -25300")
        #expect(circle.synced(1, "new") == "n1")
        // Another request seals nothing again.
        circle.addSynced(0, "more", "x")
        #expect(circle.status(0)?.seq == 6)
        // B wrote A's items into its vault as the circle's own writes: nothing pending, nothing sealed.
        #expect(try pending(circle, 1) == [] && circle.status(1)?.seq == 0)
    }

    @Test("with whenUnlocked locked, an afterFirstUnlock item's change is sealed at once, a locked one's waits")
    func aChangeWhileWhenUnlockedIsLocked() throws {
        let circle = try circle(with: [("chat", "c1", .afterFirstUnlock), ("mail", "m1", nil)])
        defer { circle.cleanUp() }
        let a = circle.machines[0]
        #expect(a.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(circle.updateSynced(0, "chat", "c2") == .ok)
        #expect(circle.status(0)?.seq == 3)
        circle.carry(0, 1)
        #expect(circle.synced(1, "chat") == "c2")
        // A change to mail made before the lock, not yet sealed: its row is locked, it waits.
        #expect(a.send(.unlock(uid: alice, key: circle.keys[0]), as: alice) == .ok)
        try behindArcad(circle, 0) { vault in
            try vault.update(syncedQuery("mail"), changes: ItemAttributes(), secret: try secretBytes("m2"))
        }
        #expect(a.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(circle.updateSynced(0, "chat", "c3") == .ok)
        #expect(circle.status(0)?.seq == 4)
        #expect(try pending(circle, 0).count == 1)
        #expect(a.send(.unlock(uid: alice, key: circle.keys[0]), as: alice) == .ok)
        #expect(try pending(circle, 0) == [])
        #expect(circle.status(0)?.seq == 5)
        circle.carry(0, 1)
        #expect(circle.synced(1, "mail") == "m2")
        #expect(circle.synced(1, "chat") == "c3")
    }

    @Test("the items an import adds are sealed once, through the pending rows; a re-import seals nothing")
    func anImportIsSealedOnce() throws {
        let circle = try circle(with: [])
        defer { circle.cleanUp() }
        let source = try TestDaemon()
        defer { source.cleanUp() }
        _ = try enrolled(source, alice)
        var attributes = genp("imported", "alice")
        attributes[.synchronizable] = .bool(true)
        let add = AddRequest(
            vault: .user(uid: alice), itemClass: .genericPassword, attributes: attributes,
            secret: Array("from-backup".utf8))
        #expect(source.send(.add(add), as: alice) == .items([]))
        let pass = Array("a long enough passphrase".utf8)
        guard
            case .backup(let backup) = source.send(.exportItems(uid: alice, secret: pass, passphrase: true), as: alice)
        else {
            Issue.record("no backup")
            return
        }
        let a = circle.machines[0]
        let request = Request.importItems(uid: alice, backup: backup, secret: pass)
        #expect(a.send(request, as: alice) == .importSummary(added: 1, replaced: 0, unchanged: 0))
        #expect(try pending(circle, 0) == [])
        #expect(circle.status(0)?.seq == 1)
        #expect(a.send(request, as: alice) == .importSummary(added: 0, replaced: 0, unchanged: 1))
        #expect(circle.status(0)?.seq == 1)
        circle.carry(0, 1)
        #expect(circle.synced(1, "imported") == "from-backup")
    }
}
