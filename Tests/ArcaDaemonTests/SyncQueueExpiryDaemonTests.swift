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
        #expect(before.detail?.expired == 0)
        #expect(before.detail?.waiting == 512)
        // One device, this one: active, its head's time within an eighth of the horizon of now.
        let devices = try #require(before.detail?.devices)
        #expect(devices.map(\.dormant) == [false])
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let step: UInt64 = 30 * 24 * UInt64(Self.hour) / 8
        #expect(devices[0].headMillis == now / step * step || devices[0].headMillis == (now - 60_000) / step * step)
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

    /// The store and `body` run inside machine 0's user context.
    func inContext<T>(
        _ circle: SyncCircle, _ body: (Daemon, UserState, SyncStore) throws(HandlerError) -> T
    ) throws -> T {
        let daemon = circle.machines[0].daemon
        let store = SyncStore(stateDirectory: circle.machines[0].directory, uid: alice)
        return try daemon.context(alice).withLock { state throws(HandlerError) in try body(daemon, state, store) }
    }

    @Test("a waiting file taken from the queue and queued again keeps the time it was first queued")
    func requeueKeepsSince() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let (_, files) = try SyncQueueDaemonTests().foreignRecords(3)
        let start = UInt64(Date().timeIntervalSince1970 * 1000)
        #expect(push(circle, files).map(\.code) == [.queued, .queued, .queued])
        try circle.restart(0, offset: 23 * Self.hour)
        try inContext(circle) { daemon, state, store throws(HandlerError) in
            let (taken, since) = try daemon.takeQueue(store, state: state, retryWaiting: true)
            #expect(taken == files)
            #expect(since.count == 3)
            #expect(since.values.allSatisfy { $0 >= start && $0 < start + 60_000 })
            let outcomes = try daemon.enqueue(
                taken, waiting: true, message: "", state: state, store: store, boundWaiting: false, since: since)
            #expect(outcomes.map(\.code) == [.queued, .queued, .queued])
        }
        // A day and a minute after they were first queued (a minute after being queued again).
        try circle.restart(0, offset: 24 * Self.hour + 60_000)
        #expect(detail(circle, 0)?.detail?.waiting == 0)
        #expect(detail(circle, 0)?.detail?.expired == 3)
    }

    @Test("a waiting file queued more than a day in the future (the clock went back) expires")
    func futureSinceExpires() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let (_, files) = try SyncQueueDaemonTests().foreignRecords(2)
        try circle.restart(0, offset: 24 * Self.hour + 60_000)
        #expect(push(circle, files).map(\.code) == [.queued, .queued])
        try circle.restart(0, offset: 0)
        #expect(detail(circle, 0)?.detail?.waiting == 0)
        #expect(detail(circle, 0)?.detail?.expired == 2)
    }

    @Test("waiting files taken from the queue are bounded too: the oldest beyond 512 dropped, counted as expired")
    func requeuedFilesAreBounded() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let (_, files) = try SyncQueueDaemonTests().foreignRecords(600)
        try inContext(circle) { daemon, state, store throws(HandlerError) in
            let outcomes = try daemon.enqueue(
                files, waiting: true, message: "", state: state, store: store, boundWaiting: false)
            #expect(outcomes.prefix(88).allSatisfy { $0.code == .refused })
            #expect(outcomes.suffix(512).allSatisfy { $0.code == .queued })
            let kept = try store.entries(queue: true).compactMap { entry -> SyncFile? in
                guard case .queued(let kind, let author, let bytes) = entry else { return nil }
                return QueuedFile(kind: kind, author: author, bytes: bytes)?.file
            }
            #expect(kept == Array(files.suffix(512)))
        }
        #expect(detail(circle, 0)?.detail?.waiting == 512)
        #expect(detail(circle, 0)?.detail?.expired == 88)
        #expect(
            detail(circle, 0)?.reports.contains(
                "88 files waiting for a circle update dropped, the oldest beyond the bound (512 files, 4 MiB), "
                    + "counted as expired (88 in all)") == true)
    }
}
