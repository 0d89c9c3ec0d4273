import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// The incoming queue is root's file fed by the user's own folder: a flood of junk keeps at
/// most its bounds, is reported, and costs no work per request afterwards.
@Suite("arcad sync queue bounds (root)", .serialized)
struct SyncQueueDaemonTests {
    let alice: UInt32 = 60_195
    let bob: UInt32 = 60_196

    /// `count` validly signed records of a device outside the circle (another circle's).
    func foreignRecords(_ count: Int) throws -> (author: [UInt8], files: [SyncFile]) {
        let signer = try SigningKey.generate()
        let author = try DeviceID(signer.publicKey)
        var replica = try SyncReplica(
            signer: signer, circle: Circle(devices: [author], epoch: 0, key: try SecretBytes.random(count: 32)),
            clock: HybridLogicalClock(source: SystemClock()))
        let files = try (0..<count).map { _ in
            let body = RecordBody(attributes: [1, 2, 3], secret: try SecretBytes.random(count: 16))
            return SyncFile(kind: .record, author: author.bytes, bytes: try replica.create(body).1.bytes)
        }
        return (author.bytes, files)
    }

    func push(_ t: TestDaemon, _ files: [SyncFile]) -> [SyncFileOutcome] {
        var outcomes: [SyncFileOutcome] = []
        for start in stride(from: 0, to: files.count, by: 400) {
            let batch = Array(files[start..<min(files.count, start + 400)])
            guard case .syncPushResult(let more) = t.send(.syncPush(uid: alice, files: batch), as: alice) else {
                Issue.record("push failed")
                return outcomes
            }
            outcomes += more
        }
        return outcomes
    }

    func queueFile(_ t: TestDaemon) -> String { "\(t.directory)/sync/\(alice).queue" }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    func modified(_ path: String) -> timespec {
        var s = stat()
        _ = stat(path, &s)
        return s.st_mtim
    }

    @Test("a flood while locked: junk refused, each device capped, the drops reported, other users served")
    func floodWhileLocked() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let t = circle.machines[0]
        _ = try enrolled(t, bob)
        #expect(t.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        let (flooder, flood) = try foreignRecords(SyncQueueLimits.filesPerAuthor + 52)
        let outcomes = push(t, flood)
        #expect(outcomes.filter { $0.code == .queued }.count == SyncQueueLimits.filesPerAuthor)
        let refused = outcomes.filter { $0.code == .deferred }
        #expect(refused.count == 52)
        #expect(refused.first?.message.hasPrefix("not kept: the queue of waiting files is full") == true)
        // Bytes that are no record, and a record whose signature was altered, are never kept.
        let garbage = (0..<300).map { _ in
            SyncFile(kind: .record, author: flooder, bytes: SecureRandom.bytes(count: 200))
        }
        var forged = try foreignRecords(1).files[0]
        forged.bytes[forged.bytes.count - 1] ^= 1
        let junk = push(t, garbage + [forged])
        #expect(junk.allSatisfy { $0.code == .refused })
        #expect(junk.first?.message == "not a sync record; not kept")
        #expect(junk.last?.message.hasPrefix("bad signature") == true)
        // At most `authors` devices: the 15 next ones are kept, the rest refused.
        var others: [SyncFile] = []
        for _ in 0..<20 { others += try foreignRecords(1).files }
        let codes: [SyncFileOutcomeCode] = Array(repeating: .queued, count: 15) + Array(repeating: .deferred, count: 5)
        #expect(push(t, others).map(\.code) == codes)
        let held = size(queueFile(t))
        #expect(held > 0 && held <= SyncQueueLimits.bytes)
        // Another user of the same arcad is served meanwhile.
        #expect(t.send(addRequest(bob, "mail", "bob", "b-secret"), as: bob) == .items([]))
        #expect(secretText(t.send(getRequest(bob, "mail", "bob"), as: bob)) == "b-secret")
        // Unlocked: the files wait for a circle update that names their devices; the drops are reported.
        #expect(t.send(.unlock(uid: alice, key: circle.keys[0]), as: alice) == .ok)
        let status = circle.status(0)
        // Files queued while locked that must wait are bounded like pushed ones: the newest 512
        // stay, the oldest are dropped and counted as expired.
        #expect(status?.queued == UInt32(SyncQueueLimits.waitingFiles))
        let expired = SyncQueueLimits.filesPerAuthor + 15 - SyncQueueLimits.waitingFiles
        #expect(
            status?.reports.contains(
                "\(expired) files waiting for a circle update dropped, the oldest beyond the bound (512 files, 4 MiB), "
                    + "counted as expired (\(expired) in all)") == true)
        let short = try DeviceID(flooder).short
        let dropped = "52 files from device \(short) dropped: the queue was full"
        #expect(status?.reports.contains { $0.hasPrefix(dropped) } == true)
        #expect(status?.reports.filter { $0.hasPrefix("1 files from device ") }.count == 5)
        // A request afterwards does not retry them: the queue file is not rewritten.
        let before = modified(queueFile(t))
        #expect(circle.addSynced(0, "mail", "m1") == .items([]))
        #expect(circle.status(0)?.seq == 1)
        let after = modified(queueFile(t))
        #expect(before.tv_sec == after.tv_sec && before.tv_nsec == after.tv_nsec)
        #expect(size(queueFile(t)) <= SyncQueueLimits.bytes)
    }

    @Test(
        "unlocked: another circle's records wait within their bound and the overflow is deferred (offered again by the agent)"
    )
    func floodWhileUnlocked() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let t = circle.machines[0]
        let (_, flood) = try foreignRecords(SyncQueueLimits.filesPerAuthor + 10)
        let outcomes = push(t, flood)
        // Files waiting for a circle update have their own, smaller bound (they also expire).
        #expect(outcomes.filter { $0.code == .queued }.count == SyncQueueLimits.waitingFiles)
        #expect(outcomes.filter { $0.code == .deferred }.count == flood.count - SyncQueueLimits.waitingFiles)
        // Pushed again (the agent offers deferred files again): still bounded, nothing doubled.
        _ = push(t, flood)
        #expect(circle.status(0)?.queued == UInt32(SyncQueueLimits.waitingFiles))
        // Each push's deferrals are reported (per device and batch): 2 pushes, every deferred file counted.
        let deferred = flood.count - SyncQueueLimits.waitingFiles
        let suffix =
            " files from device \(Daemon.short(flood[0].author)) not kept: " + SyncQueueLimits.waitingDescription
        let counted = (circle.status(0)?.reports ?? []).filter { $0.hasSuffix(suffix) }.compactMap {
            Int($0.dropLast(suffix.count))
        }
        #expect(counted.reduce(0, +) == 2 * deferred)
    }
}
