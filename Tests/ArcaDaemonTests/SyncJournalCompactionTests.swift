import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// The sync journal is compacted (issue 17, review of the horizon work): a replay of the
/// compacted journal rebuilds the same replica, its size stays bounded however many snapshots
/// are adopted, a crash before the rename loses nothing, and a journal that cannot be read
/// whole is refused loudly, never read in part. Real files in a real state directory.
@Suite("arcad sync journal compaction", .serialized)
struct SyncJournalCompactionTests {
    let uid: UInt32 = 60_231

    /// Device A (a bare replica, the peer) and device B (a session over a fresh state directory).
    final class Pair {
        let directory: String
        let key: SecretBytes
        let circle: Circle
        var a: SyncReplica
        let bSigner: SigningKey
        var b: SyncSession

        init(uid: UInt32) throws {
            directory =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "journal17-compaction-\(UUID().uuidString)"
                ).path
            try StateDirectory.prepare(directory)
            key = try SecretBytes.random(count: 32)
            let aSigner = try SigningKey.generate()
            bSigner = try SigningKey.generate()
            circle = Circle(
                devices: [try DeviceID(aSigner.publicKey), try DeviceID(bSigner.publicKey)], epoch: 0, key: key)
            a = try SyncReplica(signer: aSigner, circle: circle, clock: HybridLogicalClock(source: SystemClock()))
            b = try SyncSession(store: SyncStore(stateDirectory: directory, uid: uid), signer: bSigner, circle: circle)
        }

        /// B as a restart finds it: a new session replaying the journal.
        func restarted() throws -> SyncSession {
            let session = try SyncSession(store: b.store, signer: bSigner, circle: b.replica.circle)
            try session.replay()
            return session
        }

        /// A writes `count` items of `size`-byte secrets (and deletes every other one); B applies
        /// them and A's head, journaling both.
        func exchange(items count: Int, size: Int) throws {
            var files: [[UInt8]] = []
            for index in 0..<count {
                let body = RecordBody(attributes: Array("attributes".utf8), secret: try SecretBytes.random(count: size))
                let (ref, record) = try a.create(body)
                files.append(record.bytes)
                if index % 2 == 1 { files.append(try a.delete(ref).bytes) }
            }
            for file in files { try b.replica.apply(file) }
            try observeHead()
        }

        /// B observes A's head, as arcad does with a pushed head.
        func observeHead() throws {
            let head = try a.head().bytes
            try b.replica.observe(head: head)
            b.lastHeads[a.device] = head
            try b.persist([.head(head)])
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: directory) }
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    func snapshotEntries(_ store: SyncStore) throws -> Int {
        try store.entries().filter { if case .snapshot = $0 { true } else { false } }.count
    }

    @Test("after 40 adoptions of 100 KiB snapshots the journal holds one snapshot and replays to the same replica")
    func boundedAfterManyAdoptions() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 40, size: 2_000)
        for _ in 0..<40 {
            let snapshot = try pair.a.makeSnapshot()
            #expect(snapshot.bytes.count > 50_000)
            #expect(try pair.b.replica.adopt(snapshot: snapshot.bytes) == .adopted(resynced: 0))
            try pair.b.persist([.snapshot(snapshot.bytes)])
            // A head per adoption too: each peer's head is journaled at every change.
            try pair.observeHead()
        }
        let journal = pair.b.store.journalPath
        // Without compaction: 40 snapshots of > 50 KB each (> 2 MB). Compacted: at most four times
        // the minimal journal plus the 1 MiB slack.
        let entries = try pair.b.store.entries()
        let accepted = try pair.b.replayed(entries).restored.keptHeads
        let minimal = SyncStore.encode(SyncSession.compacted(entries, heads: accepted)).count
        #expect(size(journal) <= 4 * minimal + SyncSession.compactionSlack)
        #expect(size(journal) < 40 * 50_000)
        pair.b.compactJournal(reason: "test", force: true)
        #expect(try snapshotEntries(pair.b.store) == 1)
        #expect(size(journal) == minimal)
        let heads = try pair.b.store.entries().filter { if case .head = $0 { true } else { false } }
        #expect(heads.count == 1)
        // A restart replays the compacted journal into exactly the replica that was running.
        let replayed = try pair.restarted()
        #expect(replayed.replica.replayDigest == pair.b.replica.replayDigest)
        #expect(replayed.replica.stateDigest == pair.b.replica.stateDigest)
        #expect(replayed.lastHeads == pair.b.lastHeads)
        #expect(replayed.lastHeads.count == 1)
        #expect(replayed.replica.liveItems.count == 20)
        #expect(replayed.replica.appliedSeq(of: pair.a.device) == 60)
        #expect(
            try FileManager.default.attributesOfItem(atPath: journal)[.posixPermissions] as? Int == 0o600)
    }

    @Test("burials and snapshots replay where they stood: digest of every item, head and burial unchanged")
    func compactionKeepsBurials() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 10, size: 100)
        // B collects what A deleted (A acknowledged everything B has: A wrote it all).
        let buried = pair.b.collectTombstones()
        #expect(!buried.isEmpty)
        try pair.b.persist(buried)
        for _ in 0..<5 {
            let snapshot = try pair.a.makeSnapshot()
            try pair.b.replica.adopt(snapshot: snapshot.bytes)
            try pair.b.persist([.snapshot(snapshot.bytes)])
            try pair.exchange(items: 4, size: 100)
        }
        let before = try pair.b.store.entries().count
        pair.b.compactJournal(reason: "test", force: true)
        #expect(try pair.b.store.entries().count < before)
        #expect(try snapshotEntries(pair.b.store) == 2)  // A's last, and B's own
        let replayed = try pair.restarted()
        #expect(replayed.replica.replayDigest == pair.b.replica.replayDigest)
        #expect(replayed.replica.items.values.filter(\.buried).count == 5)
        #expect(replayed.snapshot == pair.b.snapshot)
    }

    @Test("a crash between the write and the rename (the temporary file left) loses nothing")
    func crashBeforeRename() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 6, size: 100)
        for _ in 0..<3 { try pair.exchange(items: 1, size: 100) }
        let journal = pair.b.store.journalPath
        let digest = pair.b.replica.replayDigest
        let original = try Data(contentsOf: URL(fileURLWithPath: journal))
        // What a crash after the temporary file's write, before its rename, leaves: a partial copy.
        try Data(original.prefix(original.count / 2)).write(to: URL(fileURLWithPath: journal + ".tmp"))
        let replayed = try pair.restarted()
        #expect(replayed.replica.replayDigest == digest)
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == original)
        // The next compaction replaces the stale temporary file and renames its own over the journal.
        replayed.compactJournal(reason: "test", force: true)
        #expect(!FileManager.default.fileExists(atPath: journal + ".tmp"))
        #expect(size(journal) < original.count)
        #expect(try pair.restarted().replica.replayDigest == digest)
    }

    @Test("a torn last entry is dropped at replay, so later appends stay readable")
    func tornTailIsCut() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 3, size: 100)
        let journal = pair.b.store.journalPath
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data([1, 0, 0, 0x10, 0xAA, 0xBB]))
        handle.closeFile()
        #expect(try pair.b.store.read().torn == true)
        let replayed = try pair.restarted()
        #expect(try replayed.store.read().torn == false)
        pair.b = replayed
        try pair.exchange(items: 2, size: 100)
        #expect(try pair.restarted().replica.replayDigest == pair.b.replica.replayDigest)
    }

    /// A's head announcing seq 5 journaled while B holds only 3, then A removed after 3: a
    /// replay now refuses that head (past the cut-off) while the running replica still holds it.
    func overAnnouncingHeadThenRemove(_ pair: Pair) throws -> (kept: [UInt8], refused: [UInt8]) {
        try pair.exchange(items: 2, size: 100)  // A's seq 1...3 (one deletion), its head at 3
        let kept = try pair.a.head().bytes
        _ = try pair.a.create(RecordBody(attributes: [1], secret: try SecretBytes.random(count: 8)))
        _ = try pair.a.create(RecordBody(attributes: [2], secret: try SecretBytes.random(count: 8)))
        try pair.observeHead()  // announces 5; B applied 3
        let refused = try pair.a.head().bytes
        #expect(pair.b.replica.missing[pair.a.device] == 2)
        try pair.b.replica.circle.remove(pair.a.device, lastAccepted: 3)
        return (kept, refused)
    }

    func heads(_ store: SyncStore) throws -> [[UInt8]] {
        try store.entries().compactMap { if case .head(let bytes) = $0 { bytes } else { nil } }
    }

    @Test("after a remove, a last head past the cut-off: compaction keeps the last accepted head and succeeds")
    func compactionAfterRemoveWithOverAnnouncingHead() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        let (kept, refused) = try overAnnouncingHeadThenRemove(pair)
        #expect(try heads(pair.b.store) == [kept, refused])
        let wholeDigest = try pair.b.replayed(try pair.b.store.entries()).replica.replayDigest
        pair.b.compactJournal(reason: "test", force: true)
        #expect(try heads(pair.b.store) == [kept])
        #expect(!pair.b.reports.contains { $0.hasPrefix("sync journal not compacted") })
        let replayed = try pair.restarted()
        #expect(replayed.replica.replayDigest == wholeDigest)
        #expect(replayed.lastHeads[pair.a.device] == kept)
        #expect(replayed.replica.appliedSeq(of: pair.a.device) == 3)
    }

    @Test("a failing compaction is reported in the status reports, not only the log")
    func failedCompactionIsReported() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 2, size: 100)
        let journal = pair.b.store.journalPath
        #expect(chmod(journal, 0o644) == 0)  // refused by the reader: the compaction cannot read it
        pair.b.compactJournal(reason: "test", force: true)
        #expect(chmod(journal, 0o600) == 0)
        #expect(pair.b.reports.last == "sync journal not compacted: \(journal) is readable by group or others; refused")
    }

    @Test("a torn tail is cut at replay even when no compaction would run; later entries read back intact")
    func tornTailCutWithoutCompaction() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        _ = try overAnnouncingHeadThenRemove(pair)
        let journal = pair.b.store.journalPath
        let whole = size(journal)
        let entries = try pair.b.store.entries()
        let handle = try #require(FileHandle(forWritingAtPath: journal))
        handle.seekToEndOfFile()
        handle.write(Data([2, 0, 0, 0x10, 0xAA, 0xBB]))
        handle.closeFile()
        var session = try pair.restarted()
        #expect(size(journal) == whole)
        #expect(try session.store.entries() == entries)  // cut, not compacted
        // Appended after the cut, then a restart: every entry reads back.
        let extra = SyncEntry.collected([UInt8](repeating: 7, count: 16))
        try session.persist([extra])
        session = try pair.restarted()
        #expect(try session.store.read().torn == false)
        #expect(try session.store.entries() == entries + [extra])
    }

    @Test("records taken for a batch that failed before its append are journaled by the next persist")
    func takenButNotPersisted() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 1, size: 100)
        let body = RecordBody(attributes: Array("later".utf8), secret: try SecretBytes.random(count: 10))
        let record = try pair.a.create(body).1
        try pair.b.replica.apply(record.bytes)
        #expect(pair.b.takeApplied() == [.record(record.bytes)])
        pair.b.discardTaken()  // the batch threw before persisting (as applySyncFiles' defer does)
        try pair.b.persist()
        #expect(try pair.b.store.entries().last == .record(record.bytes))
        #expect(try pair.restarted().replica.replayDigest == pair.b.replica.replayDigest)
    }

    @Test("past half the append limit a compaction is tried at every slack's growth, not only on doubling")
    func compactionNearTheLimit() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        let half = SyncStore.maximumAppendedLength / 2
        pair.b.compactedBytes = half
        pair.b.journalBytes = half + SyncSession.compactionSlack
        #expect(pair.b.compactionReason() == nil)
        pair.b.journalBytes = half + SyncSession.compactionSlack + 1
        #expect(
            pair.b.compactionReason()
                == "it is \(half + SyncSession.compactionSlack + 1) bytes, past half of \(SyncStore.maximumAppendedLength)"
        )
        pair.b.compactedBytes = 1 << 20
        pair.b.journalBytes = 3 << 20
        #expect(pair.b.compactionReason() == nil)
        pair.b.journalBytes = (3 << 20) + 1
        #expect(pair.b.compactionReason() == "it grew from \(1 << 20) to \((3 << 20) + 1) bytes")
    }

    @Test("an append that would pass the append limit is refused with a clear error, nothing written")
    func appendLimit() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 1, size: 100)
        let journal = pair.b.store.journalPath
        let before = size(journal)
        #expect(truncate(journal, off_t(SyncStore.maximumAppendedLength)) == 0)
        let entry = SyncEntry.collected([UInt8](repeating: 7, count: 16))
        #expect(
            throws: HandlerError(
                .notAvailable,
                "\(journal) is \(SyncStore.maximumAppendedLength) bytes; appending 21 would pass "
                    + "\(SyncStore.maximumAppendedLength) (compaction could not shrink it; see arca sync status); "
                    + "refused, nothing was written")
        ) { try pair.b.store.append([entry]) }
        #expect(size(journal) == SyncStore.maximumAppendedLength)
        #expect(truncate(journal, off_t(before)) == 0)
    }

    @Test("a journal larger than arcad reads whole is refused with a clear error, never read in part")
    func oversizedJournalFailsLoudly() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 2, size: 100)
        let journal = pair.b.store.journalPath
        let before = size(journal)
        // A sparse file one byte past the limit (no disk used).
        #expect(truncate(journal, off_t(SyncStore.maximumJournalLength + 1)) == 0)
        let expected = HandlerError(
            .notAvailable,
            "\(journal) is \(SyncStore.maximumJournalLength + 1) bytes, more than arcad reads "
                + "(\(SyncStore.maximumJournalLength)); refused, nothing was changed")
        #expect(throws: expected) { try pair.b.store.read() }
        #expect(throws: expected) { try pair.restarted() }
        // Nothing was cut or rewritten.
        #expect(size(journal) == SyncStore.maximumJournalLength + 1)
        #expect(truncate(journal, off_t(before)) == 0)
        #expect(try pair.restarted().replica.replayDigest == pair.b.replica.replayDigest)
    }
}
