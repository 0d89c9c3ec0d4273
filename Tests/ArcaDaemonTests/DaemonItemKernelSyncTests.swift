import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// Incoming sync records, a resolved conflict, a snapshot's burial and a restored backup
/// reach the kernel one key at a time, as a request's update does: exact kernel calls
/// over the recording twin. (Before, every merged batch and every import rebuilt each
/// loaded ring: an "install" per ring and every item's secret decrypted again.)
@Suite("in-process arcad: sync merges and restores reach the kernel per item (root)", .serialized)
struct DaemonItemKernelSyncTests {
    let alice: UInt32 = 60_231

    /// The kernel description of the synchronizable item `service`/"alice".
    func key(_ service: String) -> String { "arca:genp:\(service):alice:sync" }

    /// Two machines; A adds `count` synchronizable items "s0"… (secrets "v0"…) and B applies
    /// them; B's kernel calls cleared.
    func circle(_ count: Int) throws -> SyncCircle {
        let circle = try SyncCircle(uid: alice, count: 2)
        for i in 0..<count { #expect(circle.addSynced(0, "s\(i)", "v\(i)") == .items([])) }
        circle.carry(0, 1)
        #expect(circle.machines[1].kernel.ring(alice, .whenUnlocked)?.count == count)
        circle.machines[1].kernel.clearCalls()
        return circle
    }

    /// Changes attributes of the synchronizable item `service` on machine `index`.
    func updateSynced(_ circle: SyncCircle, _ index: Int, _ service: String, _ attributes: AttributeMap) -> Reply {
        var match = genp(service, "alice")
        match[.synchronizable] = .bool(true)
        return circle.machines[index].send(
            .update(
                UpdateRequest(
                    vault: .user(uid: alice), query: Query(itemClass: .genericPassword, attributes: match),
                    attributes: attributes)), as: alice)
    }

    @Test("one incoming record in a 200-item vault is one put; a delete one drop; a class change drop + put")
    func oneRecordOneCall() throws {
        let circle = try circle(200)
        defer { circle.cleanUp() }
        let b = circle.machines[1].kernel
        #expect(circle.updateSynced(0, "s7", "n7") == .ok)
        // A's record and head; its earlier files again, as duplicates.
        #expect(circle.carry(0, 1).filter { $0.code == .applied }.count == 2)
        #expect(b.calls == ["put whenUnlocked \(key("s7"))"])
        #expect(b.ring(alice, .whenUnlocked)?.count == 200)
        #expect(b.ring(alice, .whenUnlocked)?[key("s7")] == "n7")
        #expect(b.ring(alice, .whenUnlocked)?[key("s8")] == "v8")

        b.clearCalls()
        #expect(circle.deleteSynced(0, "s8") == .ok)
        circle.carry(0, 1)
        #expect(b.calls == ["drop whenUnlocked \(key("s8"))"])
        #expect(b.ring(alice, .whenUnlocked)?.count == 199)

        b.clearCalls()
        #expect(updateSynced(circle, 0, "s9", [.accessible: .accessibility(.afterFirstUnlock)]) == .ok)
        circle.carry(0, 1)
        #expect(b.calls == ["drop whenUnlocked \(key("s9"))", "put afterFirstUnlock \(key("s9"))"])
        #expect(b.ring(alice, .afterFirstUnlock) == [key("s9"): "v9"])
        #expect(b.ring(alice, .whenUnlocked)?.count == 198)

        // A label only: the item is written again with the same key and secret, one put.
        b.clearCalls()
        #expect(updateSynced(circle, 0, "s10", [.label: .string("relabelled")]) == .ok)
        circle.carry(0, 1)
        #expect(b.calls == ["put whenUnlocked \(key("s10"))"])
        #expect(b.ring(alice, .whenUnlocked)?[key("s10")] == "v10")
        #expect(circle.synced(1, "s7") == "n7")
    }

    @Test("a batch over 64 items rebuilds only the ring it fills; the one item for the other ring is a put")
    func batchPerRing() throws {
        let circle = try circle(0)
        defer { circle.cleanUp() }
        for i in 0..<65 { #expect(circle.addSynced(0, "w\(i)", "x\(i)") == .items([])) }
        #expect(circle.addSynced(0, "afu", "y", accessible: .afterFirstUnlock) == .items([]))
        circle.carry(0, 1)
        let b = circle.machines[1].kernel
        #expect(b.calls == ["put afterFirstUnlock \(key("afu"))", "install whenUnlocked"])
        #expect(b.ring(alice, .whenUnlocked)?.count == 65)
        #expect(b.ring(alice, .whenUnlocked)?[key("w64")] == "x64")
        #expect(b.ring(alice, .afterFirstUnlock) == [key("afu"): "y"])
    }

    @Test("resolving a conflict in favour of the sibling is one put; the losing edit itself made no call")
    func resolveIsOnePut() throws {
        let circle = try circle(20)
        defer { circle.cleanUp() }
        let b = circle.machines[1].kernel
        // A edits s3 while B deletes it, neither seeing the other; B's later delete wins.
        #expect(circle.updateSynced(0, "s3", "edit-a") == .ok)
        usleep(5_000)
        #expect(circle.deleteSynced(1, "s3") == .ok)
        #expect(b.calls == ["drop whenUnlocked \(key("s3"))"])
        b.clearCalls()
        circle.carry(0, 1)
        circle.carry(1, 0)
        #expect(circle.status(1)?.conflicts == 1)
        #expect(b.calls == [])
        guard case .syncConflicts(let conflicts) = circle.machines[1].send(.syncConflicts(uid: alice), as: alice),
            let conflict = conflicts.first, let edit = conflict.versions.first(where: { !$0.winner })
        else {
            Issue.record("no conflict listed")
            return
        }
        #expect(
            circle.machines[1].send(.syncResolve(uid: alice, item: conflict.item, keep: edit.hash), as: alice) == .ok)
        #expect(b.calls == ["put whenUnlocked \(key("s3"))"])
        #expect(b.ring(alice, .whenUnlocked)?[key("s3")] == "edit-a")
        #expect(b.ring(alice, .whenUnlocked)?.count == 20)
    }

    @Test("a snapshot that buries an item B never edited drops its key and nothing else")
    func burialIsOneDrop() throws {
        let circle = try circle(10)
        defer { circle.cleanUp() }
        circle.carry(1, 0)
        #expect(circle.deleteSynced(0, "s4") == .ok)
        // 31 days on: A collects the delete past B (dormant) and publishes a snapshot.
        let day = 24 * 3600 * 1000
        try circle.restart(0, offset: 31 * day)
        try circle.restart(1, offset: 31 * day + 120_000)
        // The twin forgets its rings at a restart (the real kernel keeps them): put them back.
        #expect(circle.machines[1].send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        #expect(circle.machines[1].send(.unlock(uid: alice, key: circle.keys[1]), as: alice) == .ok)
        let b = circle.machines[1].kernel
        #expect(b.ring(alice, .whenUnlocked)?.count == 10)
        b.clearCalls()
        circle.carry(0, 1)
        #expect(b.calls == ["drop whenUnlocked \(key("s4"))"])
        #expect(b.ring(alice, .whenUnlocked)?.count == 9)
        #expect(circle.synced(1, "s4") == "error -25300")
    }

    @Test("an incoming delete whose key the kernel keeps is errSecInternalComponent, as a request's delete")
    func failedDropIsReported() throws {
        let circle = try circle(3)
        defer { circle.cleanUp() }
        let b = circle.machines[1]
        #expect(circle.deleteSynced(0, "s1") == .ok)
        b.kernel.dropsFail.store(true, ordering: .relaxed)
        #expect(
            b.send(.syncPush(uid: alice, files: circle.files(of: 0, for: 1)), as: alice)
                == .error(
                    status: .internalComponent,
                    message: "the vault changed, but the old version may still be in the kernel; see arcad's log"))
        b.kernel.dropsFail.store(false, ordering: .relaxed)
        #expect(b.kernel.calls == ["drop whenUnlocked \(key("s1"))"])
        #expect(circle.synced(1, "s1") == "error -25300")
    }

    @Test("an incoming secret too large for the kernel is counted in status until a record makes it fit")
    func notInKernelCount() throws {
        let circle = try circle(2)
        defer { circle.cleanUp() }
        let b = circle.machines[1]
        #expect(circle.addSynced(0, "big", String(repeating: "x", count: 40_000)) == .items([]))
        circle.carry(0, 1)
        #expect(b.kernel.calls == ["put whenUnlocked \(key("big"))"])
        #expect(itemsNotInKernel(b, alice) == 1)
        #expect(circle.updateSynced(0, "big", "small") == .ok)
        circle.carry(0, 1)
        #expect(itemsNotInKernel(b, alice) == 0)
        #expect(b.kernel.ring(alice, .whenUnlocked)?[key("big")] == "small")
        #expect(circle.updateSynced(0, "s0", String(repeating: "y", count: 40_000)) == .ok)
        circle.carry(0, 1)
        #expect(itemsNotInKernel(b, alice) == 1)
        #expect(circle.deleteSynced(0, "s0") == .ok)
        circle.carry(0, 1)
        #expect(itemsNotInKernel(b, alice) == 0)
    }

    @Test("a backup restored into a 200-item vault: one put per item added or replaced; again: no call")
    func restoreIsPerItem() throws {
        let target = try TestDaemon()
        defer { target.cleanUp() }
        _ = try enrolled(target, alice)
        for i in 0..<200 { #expect(target.send(addRequest(alice, "svc", "a\(i)", "s\(i)"), as: alice) == .items([])) }
        // Made later, so that its copy of a7 is newer (and in the other class).
        let source = try TestDaemon()
        defer { source.cleanUp() }
        let key = try enrolled(source, alice)
        _ = source.send(addRequest(alice, "svc", "a7", "moved", accessible: .afterFirstUnlock), as: alice)
        _ = source.send(addRequest(alice, "svc", "new", "fresh"), as: alice)
        guard case .recoveryKey(let recovery) = source.send(.rotateRecoveryKey(uid: alice, key: key), as: alice),
            case .backup(let backup) = source.send(
                .exportItems(uid: alice, secret: recovery, passphrase: false), as: alice)
        else {
            Issue.record("export failed")
            return
        }
        target.kernel.clearCalls()
        #expect(
            target.send(.importItems(uid: alice, backup: backup, secret: recovery), as: alice)
                == .importSummary(added: 1, replaced: 1, unchanged: 0))
        #expect(
            target.kernel.calls.sorted() == [
                "drop whenUnlocked arca:genp:svc:a7", "put afterFirstUnlock arca:genp:svc:a7",
                "put whenUnlocked arca:genp:svc:new",
            ])
        #expect(target.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:svc:a7": "moved"])
        #expect(target.kernel.ring(alice, .whenUnlocked)?.count == 200)
        #expect(target.kernel.ring(alice, .whenUnlocked)?["arca:genp:svc:new"] == "fresh")
        target.kernel.clearCalls()
        #expect(
            target.send(.importItems(uid: alice, backup: backup, secret: recovery), as: alice)
                == .importSummary(added: 0, replaced: 0, unchanged: 2))
        #expect(target.kernel.calls == [])
    }
}
