import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// Tombstone collection in arcad (issue 17): a delete every member acknowledged is buried,
/// the burial is journaled, and a restarted arcad rebuilds the same replica.
@Suite("arcad sync tombstone collection (root)", .serialized)
struct SyncTombstoneDaemonTests {
    let alice: UInt32 = 60_198

    /// Items of machine `index`'s replica: (buried, versions held), by ref.
    private func items(_ circle: SyncCircle, _ index: Int) throws -> [ItemRef: (buried: Bool, versions: Int)] {
        try circle.machines[index].daemon.context(alice).withLock { state throws(HandlerError) in
            var out: [ItemRef: (buried: Bool, versions: Int)] = [:]
            for (ref, item) in state.sync?.replica.items ?? [:] { out[ref] = (item.buried, item.versions.count) }
            return out
        }
    }

    @Test("a delete both machines acknowledged is collected on both; a restart keeps it collected")
    func collectedAndReplayed() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "gone", "g0ne") == .items([]))
        #expect(circle.addSynced(0, "kept", "k3pt") == .items([]))
        circle.carry(0, 1)
        #expect(circle.deleteSynced(0, "gone") == .ok)
        // The delete and A's head in one push: B writes the delete into its vault, then buries.
        circle.carry(0, 1)
        #expect(circle.synced(1, "gone") == "error -25300")
        #expect(circle.synced(1, "kept") == "k3pt")
        let onB = try items(circle, 1)
        #expect(onB.count == 2)
        #expect(onB.values.filter(\.buried).map(\.versions) == [0])
        #expect(onB.values.filter { !$0.buried }.map(\.versions) == [1])
        // A has not seen B's acknowledgement yet: the tombstone is still held there.
        #expect(try items(circle, 0).values.filter(\.buried).count == 0)
        circle.carry(1, 0)
        #expect(try items(circle, 0).values.filter(\.buried).count == 1)
        #expect(try circle.digest(0) == circle.digest(1))

        let before = try circle.digest(1)
        let second = try circle.machines[1].restarted()
        second.daemon.restoreParkedKeys()
        circle.machines[1] = second
        _ = circle.status(1)
        #expect(try circle.digest(1) == before)
        #expect(try items(circle, 1).values.filter(\.buried).map(\.versions) == [0])
        #expect(circle.synced(1, "kept") == "k3pt")
        #expect(circle.synced(1, "gone") == "error -25300")
        // Nothing was lost for the exchange: both go on converging.
        #expect(circle.addSynced(1, "after", "4fter") == .items([]))
        circle.carry(1, 0)
        #expect(circle.synced(0, "after") == "4fter")
        #expect(try circle.digest(0) == circle.digest(1))
    }

    /// A record A wrote over the deleted item's old version (standing in for an edit written
    /// before the delete was seen): the bytes, after A's delete.
    private func lateEdit(_ circle: SyncCircle) throws -> [UInt8] {
        try circle.machines[0].daemon.context(alice).withLock { state throws(HandlerError) -> [UInt8] in
            guard let session = state.sync,
                let item = session.replica.items.values.first(where: { $0.winner?.deleted == true }),
                let old = item.versions.values.first(where: { !$0.deleted })
            else { throw HandlerError(.internalComponent, "no deleted item on A") }
            do {
                let record = try session.replica.write(ref: item.ref, body: old.body, parents: [old.hash])
                try session.persist()
                return record.bytes
            } catch {
                throw HandlerError(.internalComponent, "\(error)")
            }
        }
    }

    @Test("a late sibling of a buried item is listed and resolved into a fresh live item")
    func lateSiblingListedAndResolved() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "gone", "g0ne") == .items([]))
        circle.carry(0, 1)
        #expect(circle.deleteSynced(0, "gone") == .ok)
        circle.carry(0, 1)
        #expect(try items(circle, 1).values.filter(\.buried).count == 1)
        let late = try lateEdit(circle)
        #expect(
            circle.push([SyncFile(kind: .record, author: circle.devices[0], bytes: late)], to: 1).map(\.code) == [
                .applied
            ])
        #expect(circle.synced(1, "gone") == "error -25300")  // a sibling, not a resurrection
        guard case .syncConflicts(let conflicts) = circle.machines[1].send(.syncConflicts(uid: alice), as: alice),
            let conflict = conflicts.first
        else {
            Issue.record("no conflict listed")
            return
        }
        #expect(conflicts.count == 1)
        #expect(conflict.versions.map(\.winner) == [false])
        #expect(conflict.versions.map(\.deleted) == [false])
        #expect(conflict.versions.first?.attributes[.service] == .string("gone"))
        let keep = conflict.versions[0].hash
        #expect(circle.machines[1].send(.syncResolve(uid: alice, item: conflict.item, keep: keep), as: alice) == .ok)
        #expect(circle.synced(1, "gone") == "g0ne")
        guard case .syncConflicts(let after) = circle.machines[1].send(.syncConflicts(uid: alice), as: alice) else {
            Issue.record("no conflicts reply")
            return
        }
        #expect(after.isEmpty)
        circle.carry(1, 0)
        #expect(circle.synced(0, "gone") == "g0ne")
        #expect(try circle.digest(0) == circle.digest(1))
    }
}
