import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// arcad's sync files (issue 17): what survives a restart, a crash mid-append, a tampered
/// circle, a lock.
@Suite("arcad sync state files (root)", .serialized)
struct SyncStoreDaemonTests {
    let alice: UInt32 = 60_197

    @Test("a record that waits for an earlier one survives a restart and applies when that one comes")
    func waitingRecordSurvivesRestart() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        circle.addSynced(0, "first", "1")
        circle.addSynced(0, "second", "2")
        let records = circle.files(of: 0, for: 1).filter { $0.kind == .record }
        #expect(records.count == 2)
        #expect(circle.push([records[1]], to: 1).map(\.code) == [.queued])
        let second = try circle.machines[1].restarted()
        second.daemon.restoreParkedKeys()
        circle.machines[1] = second
        #expect(circle.push([records[0]], to: 1).map(\.code) == [.applied])
        #expect(circle.synced(1, "first") == "1")
        #expect(circle.synced(1, "second") == "2")
        #expect(circle.status(1)?.devices.first { $0.id == circle.devices[0] }?.applied == 2)
    }

    @Test("a torn last journal entry (a crash mid-append) is ignored; the rest replays")
    func tornJournalTail() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        circle.addSynced(0, "kept", "k")
        circle.carry(0, 1)
        let journal = SyncStore(stateDirectory: circle.machines[1].directory, uid: alice).journalPath
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data([1, 0, 0, 0x10, 0xAA, 0xBB]))  // a record entry announcing 4096 bytes, cut short
        handle.closeFile()
        let second = try circle.machines[1].restarted()
        second.daemon.restoreParkedKeys()
        circle.machines[1] = second
        #expect(circle.status(1)?.devices.first { $0.id == circle.devices[0] }?.applied == 1)
        #expect(circle.synced(1, "kept") == "k")
    }

    @Test("a circle file altered or from another vault does not open: -26275, never a silent new circle")
    func tamperedCircle() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        let path = SyncStore(stateDirectory: circle.machines[1].directory, uid: alice).circlePath
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        bytes[bytes.count / 2] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let second = try circle.machines[1].restarted()
        second.daemon.restoreParkedKeys()
        circle.machines[1] = second
        #expect(statusCode(second.send(.syncStatus(uid: alice), as: alice)) == -26275)
        #expect(statusCode(second.send(.syncPull(uid: alice, after: 0), as: alice)) == -26275)
    }

    @Test("lock --all drops the replica (it holds epoch keys); the next unlock loads it again")
    func lockAllDropsTheReplica() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        circle.addSynced(0, "x", "y")
        let before = try circle.digest(0)
        #expect(before != nil)
        #expect(circle.machines[0].send(.lockAll, as: alice) == .ok)
        #expect(try circle.digest(0) == nil)
        #expect(statusCode(circle.machines[0].send(.syncPull(uid: alice, after: 0), as: alice)) == -25308)
        #expect(circle.machines[0].send(.unlock(uid: alice, key: circle.keys[0]), as: alice) == .ok)
        #expect(try circle.digest(0) == before)
    }

    @Test("a clock 10 minutes ahead (sync_clock_offset_ms): its record is accepted, flagged, and its edit wins")
    func clockAheadIsFlagged() throws {
        let circle = try SyncCircle(uid: alice, count: 2, clockOffsets: [600_000, 0])
        defer { circle.cleanUp() }
        circle.addSynced(0, "skewed", "from-the-future")
        let outcomes = circle.carry(0, 1)
        #expect(outcomes.contains { $0.code == .applied })
        #expect(circle.synced(1, "skewed") == "from-the-future")
        let flagged = circle.status(1)?.reports.filter { $0.contains("more than 5 minutes ahead (accepted)") }
        #expect(flagged?.count == 1)
        // B's later edit still gets a clock past A's (the clock advances on receive), so it wins on both.
        #expect(circle.updateSynced(1, "skewed", "from-b") == .ok)
        circle.carry(1, 0)
        #expect(circle.synced(0, "skewed") == "from-b")
        #expect(circle.status(0)?.conflicts == 0)
    }

    @Test("a synchronizable change wakes a waiting agent (syncChanged); a non-synchronizable one does not")
    func agentWakesOnSyncChanges() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        let a = circle.machines[0]
        func events(after: UInt64) -> EventBatch? {
            guard
                case .events(let batch) = a.send(
                    .waitEvents(uid: alice, after: after, timeoutMilliseconds: 0), as: alice)
            else { return nil }
            return batch
        }
        let start = try #require(events(after: 0)).next
        _ = a.send(addRequest(alice, "local", "alice", "l"), as: alice)
        let quiet = try #require(events(after: start))
        #expect(!quiet.events.isEmpty && !quiet.events.contains(.syncChanged))
        circle.addSynced(0, "travels", "t")
        let woken = try #require(events(after: quiet.next))
        #expect(woken.events.last == .syncChanged)
        // B is woken by A's record (its head's acknowledgements change), not by A's head alone.
        let b = circle.machines[1]
        guard case .events(let before) = b.send(.waitEvents(uid: alice, after: 0, timeoutMilliseconds: 0), as: alice)
        else { return }
        circle.carry(0, 1)
        guard
            case .events(let after) = b.send(
                .waitEvents(uid: alice, after: before.next, timeoutMilliseconds: 0), as: alice)
        else { return }
        #expect(after.events.contains(.syncChanged))
        circle.carry(0, 1)
        guard
            case .events(let again) = b.send(
                .waitEvents(uid: alice, after: after.next, timeoutMilliseconds: 0), as: alice)
        else { return }
        #expect(!again.events.contains(.syncChanged))
    }

    @Test("which requests are followed by a comparison of the vault: only those that reach synchronizable items")
    func followUpClassification() {
        var synced = genp("s", "a")
        synced[.synchronizable] = .bool(true)
        let add = { (attributes: AttributeMap) in
            Request.add(
                AddRequest(vault: .user(uid: alice), itemClass: .genericPassword, attributes: attributes, secret: [1]))
        }
        #expect(Daemon.syncFollowUp(of: add(synced)) == alice)
        #expect(Daemon.syncFollowUp(of: add(genp("s", "a"))) == nil)
        let plain = Query(itemClass: .genericPassword, attributes: genp("s", "a"))
        let syncQuery = Query(itemClass: .genericPassword, attributes: synced)
        let anyQuery = Query(itemClass: .genericPassword, synchronizableAny: true)
        #expect(Daemon.syncFollowUp(of: .delete(vault: .user(uid: alice), query: plain)) == nil)
        #expect(Daemon.syncFollowUp(of: .delete(vault: .user(uid: alice), query: syncQuery)) == alice)
        #expect(Daemon.syncFollowUp(of: .delete(vault: .user(uid: alice), query: anyQuery)) == alice)
        #expect(Daemon.syncFollowUp(of: .delete(vault: .system, query: anyQuery)) == nil)
        let update = { (q: Query, a: AttributeMap) in
            Request.update(UpdateRequest(vault: .user(uid: alice), query: q, attributes: a, secret: [2]))
        }
        #expect(Daemon.syncFollowUp(of: update(plain, [:])) == nil)
        #expect(Daemon.syncFollowUp(of: update(plain, [.synchronizable: .bool(true)])) == alice)
        #expect(Daemon.syncFollowUp(of: update(syncQuery, [:])) == alice)
        #expect(Daemon.syncFollowUp(of: .deleteAttributeItem(uid: alice, reference: [1])) == nil)
        #expect(Daemon.syncFollowUp(of: .unlock(uid: alice, key: [])) == alice)
        #expect(Daemon.syncFollowUp(of: .syncPull(uid: alice, after: 0)) == nil)
    }
}
