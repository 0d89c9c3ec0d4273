import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// Sync between in-process arcads (issue 17): what one machine seals, another verifies,
/// merges and writes into its vault and kernel.
@Suite("arcad sync between machines (root)", .serialized)
struct SyncExchangeDaemonTests {
    let alice: UInt32 = 60_191

    @Test("an item added on A is readable on B, vault and kernel; updates and deletes follow")
    func addOnAReadableOnB() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "mail", "s3cret") == .items([]))
        #expect(circle.synced(1, "mail") == "error -25300")
        let outcomes = circle.carry(0, 1)
        // A's circle update for B, A's record, A's head.
        #expect(outcomes.map(\.code) == [.applied, .applied, .applied])
        #expect(circle.synced(1, "mail") == "s3cret")
        // Writing the merged item into B's vault seals nothing back (no echo).
        #expect(circle.status(1)?.seq == 0)
        let ring = circle.machines[1].kernel.ring(alice, .whenUnlocked) ?? [:]
        #expect(ring.values.contains("s3cret"))
        #expect(circle.updateSynced(0, "mail", "n3w") == .ok)
        circle.carry(0, 1)
        #expect(circle.synced(1, "mail") == "n3w")
        #expect(circle.deleteSynced(0, "mail") == .ok)
        circle.carry(0, 1)
        #expect(circle.synced(1, "mail") == "error -25300")
        #expect(!(circle.machines[1].kernel.ring(alice, .whenUnlocked) ?? [:]).values.contains("n3w"))
        // B's head acknowledges the delete: A collects the tombstone as B already did.
        circle.carry(1, 0)
        #expect(try circle.digest(0) == circle.digest(1))
        // B's own edit travels back.
        #expect(circle.addSynced(1, "chat", "from-b", accessible: .afterFirstUnlock) == .items([]))
        circle.carry(1, 0)
        #expect(circle.synced(0, "chat") == "from-b")
        #expect(circle.machines[0].kernel.ring(alice, .afterFirstUnlock)?.values.contains("from-b") == true)
    }

    @Test("non-synchronizable and ThisDeviceOnly items never produce a record; nothing in clear")
    func onlySynchronizableItemsLeave() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        let a = circle.machines[0]
        _ = a.send(addRequest(alice, "local-only", "alice", "stays-here-1"), as: alice)
        _ = a.send(
            addRequest(alice, "host-only", "alice", "stays-here-2", accessible: .whenUnlockedThisDeviceOnly), as: alice)
        // A synchronizable item can never be ThisDeviceOnly: the vault refuses it.
        #expect(
            statusCode(circle.addSynced(0, "bad", "stays-here-3", accessible: .afterFirstUnlockThisDeviceOnly)) == -50)
        guard case .syncOutbox(let empty) = a.send(.syncPull(uid: alice, after: 0), as: alice) else {
            Issue.record("no outbox")
            return
        }
        #expect(empty.records.isEmpty)
        #expect(circle.addSynced(0, "travels", "leaves-1") == .items([]))
        guard case .syncOutbox(let outbox) = a.send(.syncPull(uid: alice, after: 0), as: alice) else {
            Issue.record("no outbox")
            return
        }
        #expect(outbox.records.map(\.seq) == [1])
        let wire = outbox.records.flatMap(\.bytes) + outbox.head + outbox.approvals.flatMap(\.bytes)
        for needle in [
            "stays-here-1", "stays-here-2", "stays-here-3", "local-only", "host-only", "leaves-1", "travels", "alice",
        ] {
            #expect(!contains(wire, needle), "\(needle) in clear")
        }
        var state: [UInt8] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: a.directory + "/sync") {
            state += try [UInt8](Data(contentsOf: URL(fileURLWithPath: a.directory + "/sync/" + name)))
        }
        for needle in ["stays-here", "leaves-1", "travels", "alice"] { #expect(!contains(state, needle)) }
        circle.carry(0, 1)
        #expect(circle.synced(1, "travels") == "leaves-1")
        #expect(
            secretText(circle.machines[1].send(getRequest(alice, "local-only", "alice"), as: alice)) == "error -25300")
        #expect(
            secretText(circle.machines[1].send(getRequest(alice, "host-only", "alice"), as: alice)) == "error -25300")
        // Pull after a sequence number returns only what follows it.
        guard case .syncOutbox(let after) = a.send(.syncPull(uid: alice, after: 1), as: alice) else { return }
        #expect(after.records.isEmpty && !after.more)
    }

    @Test("A edits while C deletes: all three converge to one digest with exactly one sibling; resolve keeps it")
    func concurrentEditAndDelete() throws {
        let circle = try SyncCircle(uid: alice, count: 3)
        defer { circle.cleanUp() }
        circle.addSynced(0, "shared", "v1")
        circle.exchangeAll()
        for i in 0..<3 { #expect(circle.synced(i, "shared") == "v1") }
        // B is away (SIGSTOPped in the real test): A edits, then C deletes, neither seeing the other.
        #expect(circle.updateSynced(0, "shared", "v2-from-a") == .ok)
        usleep(5_000)
        #expect(circle.deleteSynced(2, "shared") == .ok)
        circle.exchangeAll()
        let digests = try (0..<3).map { try circle.digest($0) }
        #expect(digests[0] != nil && digests[0] == digests[1] && digests[1] == digests[2])
        for i in 0..<3 {
            #expect(circle.status(i)?.conflicts == 1)
            // The later delete wins everywhere; the edit is kept as the sibling.
            #expect(circle.synced(i, "shared") == "error -25300")
        }
        guard case .syncConflicts(let conflicts) = circle.machines[1].send(.syncConflicts(uid: alice), as: alice),
            let conflict = conflicts.first
        else {
            Issue.record("no conflict listed")
            return
        }
        #expect(conflicts.count == 1 && conflict.versions.count == 2)
        #expect(conflict.versions[0].winner && conflict.versions[0].deleted)
        #expect(conflict.versions[0].author == circle.devices[2])
        let edit = conflict.versions[1]
        #expect(!edit.winner && !edit.deleted && edit.author == circle.devices[0])
        #expect(edit.attributes[.service] == .string("shared"))
        #expect(
            circle.machines[1].send(.syncResolve(uid: alice, item: conflict.item, keep: edit.hash), as: alice) == .ok)
        #expect(circle.synced(1, "shared") == "v2-from-a")
        circle.exchangeAll()
        for i in 0..<3 {
            #expect(circle.synced(i, "shared") == "v2-from-a")
            #expect(circle.status(i)?.conflicts == 0)
        }
        #expect(try circle.digest(0) == circle.digest(2))
    }

    @Test("B locked: pushed files wait in arcad's queue (0600, ciphertext) and apply at unlock")
    func lockedQueuesThenApplies() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        let b = circle.machines[1]
        #expect(b.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        circle.addSynced(0, "late", "while-locked")
        let outcomes = circle.carry(0, 1)
        #expect(!outcomes.isEmpty && outcomes.allSatisfy { $0.code == .queued })
        let queue = SyncStore(stateDirectory: b.directory, uid: alice).queuePath
        let mode = try FileManager.default.attributesOfItem(atPath: queue)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!contains(try [UInt8](Data(contentsOf: URL(fileURLWithPath: queue))), "while-locked"))
        #expect(statusCode(b.send(.syncStatus(uid: alice), as: alice)) == -25308)
        #expect(b.send(.unlock(uid: alice, key: circle.keys[1]), as: alice) == .ok)
        #expect(circle.synced(1, "late") == "while-locked")
        #expect(!FileManager.default.fileExists(atPath: queue))
        #expect(circle.status(1)?.queued == 0)
        // Screen locked only (whenUnlocked out): still queued, applied at the next unlock.
        #expect(b.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(circle.updateSynced(0, "late", "second") == .ok)
        #expect(circle.carry(0, 1).contains { $0.code == .queued })
        #expect(circle.status(1)?.queued ?? 0 > 0)
        #expect(b.send(.unlock(uid: alice, key: circle.keys[1]), as: alice) == .ok)
        #expect(circle.synced(1, "late") == "second")
    }

    @Test("a restarted arcad rebuilds the replica from its journal, rollback detection included")
    func restartRebuilds() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        circle.addSynced(0, "one", "1")
        circle.carry(0, 1)
        let oldHead = circle.files(of: 0, for: 1).filter { $0.kind == .head }
        circle.addSynced(0, "two", "2")
        circle.carry(0, 1)
        let before = try circle.digest(1)
        let statusBefore = circle.status(1)
        let second = try circle.machines[1].restarted()
        second.daemon.restoreParkedKeys()
        circle.machines[1] = second
        #expect(try circle.digest(1) == nil, "loaded lazily")
        #expect(circle.status(1)?.devices == statusBefore?.devices)
        #expect(try circle.digest(1) == before)
        #expect(circle.synced(1, "two") == "2")
        // The head it saw before the restart still counts: the old one is a rollback.
        let refused = circle.push(oldHead, to: 1)
        #expect(refused.map(\.code) == [.refused])
        #expect(refused.first?.message.contains("rolled back from 2 to 1") == true)
        // And B keeps writing after its own last record.
        circle.addSynced(1, "three", "3")
        circle.carry(1, 0)
        #expect(circle.synced(0, "three") == "3")
    }

    @Test("a joining machine's own synchronizable items join the circle; the circle's arrive on it")
    func joinBringsLocalItems() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        circle.addSynced(0, "on-a", "a")
        let b = try TestDaemon()
        circle.machines.append(b)
        circle.keys.append(try enrolled(b, alice))
        #expect(circle.addSynced(1, "on-b", "b") == .items([]))
        try circle.join(1)
        #expect(circle.synced(1, "on-a") == "a")
        circle.carry(1, 0)
        #expect(circle.synced(0, "on-b") == "b")
        #expect(try circle.digest(0) == circle.digest(1))
    }
}
