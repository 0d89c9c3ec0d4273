import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// A pushed batch is journaled in the order it was applied (issue 17, review of the horizon
/// work): a snapshot adopted before a record of the same batch is journaled before it, so a
/// replay rebuilds what ran.
@Suite("arcad sync journal order (root)", .serialized)
struct SyncJournalOrderDaemonTests {
    let alice: UInt32 = 60_233

    @Test("a batch [snapshot, record]: the journal holds the snapshot before the record")
    func snapshotBeforeRecord() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "first", "one") == .items([]))
        circle.exchangeAll()
        let snapshot = try circle.machines[0].daemon.context(alice).withLock { state throws(HandlerError) in
            try? state.sync?.replica.makeSnapshot().bytes
        }
        let bytes = try #require(snapshot)
        #expect(circle.addSynced(0, "second", "two") == .items([]))
        let records = circle.files(of: 0, for: 1).filter { $0.kind == .record }
        let last = try #require(records.last)
        let outcomes = circle.push(
            [SyncFile(kind: .snapshot, author: circle.devices[0], bytes: bytes), last], to: 1)
        #expect(outcomes.map(\.code) == [.applied, .applied])
        let entries = try SyncStore(stateDirectory: circle.machines[1].directory, uid: alice).entries()
        let snapshotAt = try #require(entries.lastIndex(of: .snapshot(bytes)))
        let recordAt = try #require(entries.lastIndex(of: .record(last.bytes)))
        #expect(snapshotAt < recordAt)
        #expect(entries.count == recordAt + 1)
    }
}
