import ArcaSync

/// Compaction of a user's sync journal (issue 17, review of the horizon work). The journal is
/// append-only between compactions: every head a peer publishes, every approval, every snapshot
/// adopted (each up to 1 MiB) is appended, so without compaction it only grows. Once it has
/// grown past twice its last compacted size plus `compactionSlack`, and if that would drop at
/// least half of it (a journal of records alone is left as it is: checking a rewrite costs a
/// replay, as long as a restart's), it is rewritten to the entries a replay needs, in order
/// (so it stays within four times that plus the slack):
///
/// - every record once (a record journaled while it waited for an earlier one is applied by
///   the replay's own queue; its later copy is a duplicate);
/// - each peer's last head a replay accepts only (a replay keeps only that head's announcement,
///   acknowledgements and time; an earlier one can neither make it fail nor change it; a later
///   one it refuses, e.g. one past a removed device's cut-off, changes nothing either), and the
///   last one whose time was kept if that one's was not (a time too far ahead);
/// - each device's last approval only (the last one wins at replay);
/// - every collection (its burial applies where it stands);
/// - each author's last snapshot only: its burials cover every burial of that author's earlier
///   ones (an author's burial cuts only grow), and the versions they cover, arriving between
///   the two, are dropped when the later one applies.
///
/// The rewrite is kept only if a replay of it rebuilds what a replay of the whole journal
/// rebuilds (the same `SyncReplica.replayDigest`; not the running replica, which may hold a
/// head the circle, changed since, now refuses); if not (an earlier snapshot carried versions the logs here do
/// not hold yet), the snapshots are all kept and the check runs again; if that differs too,
/// nothing is rewritten and the failure is reported in `arca sync status`. The new journal replaces the old atomically
/// (`SyncStore.replaceJournal`): a crash leaves one or the other, and a temporary file left
/// behind is replaced by the next compaction.
extension SyncSession {
    /// Growth past twice the compacted size that triggers a compaction (1 MiB, one snapshot).
    static let compactionSlack = 1 << 20

    /// Why the journal should be compacted now, or nil.
    func compactionReason() -> String? {
        if journalBytes > 2 * compactedBytes + Self.compactionSlack {
            return "it grew from \(compactedBytes) to \(journalBytes) bytes"
        }
        // Past half the append limit the doubling rule alone could next fire beyond the limit,
        // after which nothing is appended and nothing compacts: try again at every slack's growth.
        if journalBytes > SyncStore.maximumAppendedLength / 2, journalBytes > compactedBytes + Self.compactionSlack {
            return "it is \(journalBytes) bytes, past half of \(SyncStore.maximumAppendedLength)"
        }
        return nil
    }

    /// Compacts the journal (see the extension's doc; `force`: whatever it would drop). A
    /// failure is logged and reported (`arca sync status`) and changes nothing: the journal as
    /// it was still replays.
    func compactJournal(reason: String, force: Bool = false) {
        defer { compactedBytes = journalBytes }
        do {
            let journal = try store.read()
            let (whole, restored) = try replayed(journal.entries)
            for keepSnapshots in [false, true] {
                let kept = Self.compacted(journal.entries, heads: restored.keptHeads, keepingSnapshots: keepSnapshots)
                guard kept.count < journal.entries.count || journal.torn else { return }
                let dropped = journal.size - SyncStore.encode(kept).count
                guard force || journal.torn || dropped * 2 >= journal.size else { return }
                guard try replayed(kept).replica.replayDigest == whole.replayDigest else { continue }
                let before = journal.size
                // A tail torn since the replay (an append cut short) is dropped here: kept first.
                if journal.torn { store.keepTornTail(from: SyncStore.encode(journal.entries).count) }
                journalBytes = try store.replaceJournal(with: kept)
                Log.info(
                    "uid \(store.uid): sync journal compacted (\(reason)): \(journal.entries.count) entries, "
                        + "\(before) bytes → \(kept.count) entries, \(journalBytes) bytes")
                return
            }
            compactionFailed("a replay of the rewrite would not rebuild what the journal rebuilds")
        } catch {
            // A failure after the rename (the directory's fsync) leaves the new journal: its size.
            if let status = try? FileSystem.status(path: store.journalPath) { journalBytes = Int(status.size) }
            compactionFailed(error.message)
        }
    }

    private func compactionFailed(_ why: String) {
        Log.warning("uid \(store.uid): sync journal not compacted: \(why)")
        note("sync journal not compacted: \(why)")
    }

    /// A replay of `entries` into a fresh replica of this device and circle, and what it restored.
    func replayed(_ entries: [SyncEntry]) throws(HandlerError) -> (replica: SyncReplica, restored: Restored) {
        var check: SyncReplica
        do {
            check = try SyncReplica(
                signer: signer, circle: replica.circle, clock: HybridLogicalClock(source: clockSource))
        } catch {
            throw HandlerError(.internalComponent, "cannot start a sync replica: \(error)")
        }
        check.horizonMillis = horizonMillis
        var restored = Restored()
        Self.replay(entries, into: &check, device: device, restored: &restored) { _ in }
        return (check, restored)
    }

    /// The entries of `entries` a replay needs, in order (see the extension's doc).
    /// `heads`: the indices in `entries` of the heads to keep (`Restored.keptHeads`: each
    /// peer's last head a replay accepted, and its last one whose time was kept); every other
    /// head is dropped.
    static func compacted(_ entries: [SyncEntry], heads: Set<Int>, keepingSnapshots: Bool = false) -> [SyncEntry] {
        var keep = [Bool](repeating: true, count: entries.count)
        var records: Set<Digest> = []
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .record(let bytes): keep[index] = records.insert(Digest.of(bytes)).inserted
            case .queued: keep[index] = false
            default: continue
            }
        }
        var approvals: Set<[UInt8]> = []
        var snapshots: Set<DeviceID> = []
        for index in entries.indices.reversed() {
            switch entries[index] {
            case .head:
                keep[index] = heads.contains(index)
            case .approval(let device, _):
                keep[index] = approvals.insert(device).inserted
            case .snapshot(let bytes):
                guard !keepingSnapshots, let author = try? Snapshot(parsing: bytes).author else { continue }
                keep[index] = snapshots.insert(author).inserted
            default:
                continue
            }
        }
        return entries.indices.filter { keep[$0] }.map { entries[$0] }
    }
}
