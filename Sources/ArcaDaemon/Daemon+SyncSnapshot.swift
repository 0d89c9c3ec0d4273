import ArcaProtocol
import ArcaSync

/// Snapshots in arcad (issue 17): a peer's snapshot, pushed by the agent from the peer's
/// folder, is verified and adopted like its records; the adoption is journaled where it
/// happened, so a restart replays it at the same point. A device that was dormant past the
/// horizon resyncs this way: items the circle collected while it was away leave its vault and
/// kernel keyring (written by `applyWinners` after the batch), and its edits of them stay as
/// conflict siblings.
extension Daemon {
    /// Collects what may be collected (tombstones every member that is not dormant has
    /// acknowledged) and journals the burial and the snapshot after what was applied so far.
    /// Run after a batch of pushed files and when the replica loads (after a restart or an
    /// unlock): time alone makes a member dormant and a tombstone old, and in a circle whose
    /// other members are all away no file arrives to trigger it. (Not after local writes: a
    /// local delete is never older than the horizon, and the scan would cost every write.)
    static func collectTombstones(_ session: SyncSession) throws(HandlerError) {
        let collected = session.collectTombstones()
        if !collected.isEmpty { try session.persist(collected) }
    }

    static func applySnapshot(_ bytes: [UInt8], author: DeviceID, session: SyncSession, journal: inout [SyncEntry])
        throws -> SyncFileOutcome
    {
        let snapshot = try Snapshot(parsing: bytes)
        guard snapshot.author == author else {
            return SyncFileOutcome(
                code: .refused, message: "a snapshot in \(author.short)'s folder names another author")
        }
        guard author != session.device else { return SyncFileOutcome(code: .duplicate) }
        switch try session.replica.adopt(snapshot: bytes) {
        case .duplicate:
            return SyncFileOutcome(code: .duplicate)
        case .adopted(let resynced):
            journal.append(.snapshot(bytes))
            if resynced > 0 {
                Log.info("uid \(session.store.uid): sync: resynced \(resynced) items from \(author.short)'s snapshot")
            }
            return SyncFileOutcome(code: .applied)
        }
    }
}
