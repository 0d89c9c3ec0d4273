import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// Files waiting for a circle update (their author or key epoch unknown) are bounded apart and
/// expire (issue 17, review of the horizon work): whoever writes into the user's folder can no
/// longer hold the queue's space for good.
@Suite("arcad sync waiting files expire (root)", .serialized)
struct SyncQueueExpiryDaemonTests {
    let alice: UInt32 = 60_232
    static let hour = 3600 * 1000

    func detail(_ circle: SyncCircle, _ index: Int) -> SyncStatus? {
        guard case .syncStatus(let s) = circle.machines[index].send(.syncStatus(uid: alice, detailed: true), as: alice)
        else { return nil }
        return s
    }

    func push(_ circle: SyncCircle, _ files: [SyncFile]) -> [SyncFileOutcome] {
        let reply = circle.machines[0].send(.syncPush(uid: alice, files: files), as: alice)
        guard case .syncPushResult(let outcomes) = reply else {
            Issue.record("push failed")
            return []
        }
        return outcomes
    }

    @Test("a flood of 600 files no circle update names: 512 wait, 88 deferred; a day later all 512 expire, counted")
    func floodExpires() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let (_, flood) = try SyncQueueDaemonTests().foreignRecords(600)
        let outcomes = push(circle, flood)
        #expect(outcomes.filter { $0.code == .queued }.count == SyncQueueLimits.waitingFiles)
        #expect(outcomes.filter { $0.code == .deferred }.count == 600 - SyncQueueLimits.waitingFiles)
        #expect(outcomes.last?.message == "not kept: " + SyncQueueLimits.waitingDescription)
        let before = try #require(detail(circle, 0))
        #expect(before.queued == 512)
        #expect(before.detail == SyncStatusDetail(devices: before.detail?.devices ?? [], expired: 0, waiting: 512))
        // 24 hours on: nothing expires yet.
        try circle.restart(0, offset: 24 * Self.hour - 60_000)
        #expect(detail(circle, 0)?.detail?.waiting == 512)
        // A day and a minute on: every waiting file expired, counted and reported.
        try circle.restart(0, offset: 24 * Self.hour + 60_000)
        let after = try #require(detail(circle, 0))
        #expect(after.queued == 0)
        #expect(after.detail?.waiting == 0)
        #expect(after.detail?.expired == 512)
        #expect(
            after.reports.contains(
                "512 files that waited more than 24 hours for a circle update naming their device or key epoch "
                    + "expired (512 in all)"))
        // The space is free again: the 88 deferred files are kept when offered again.
        let again = push(circle, Array(flood.suffix(88)))
        #expect(again.map(\.code) == Array(repeating: .queued, count: 88))
        #expect(detail(circle, 0)?.detail?.waiting == 88)
        #expect(detail(circle, 0)?.detail?.expired == 512)
        // An older client's status request gets the reply it parses: no detail.
        #expect(circle.status(0)?.detail == nil)
        #expect(circle.status(0)?.queued == 88)
    }
}
