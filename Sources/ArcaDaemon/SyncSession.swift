import ArcaCrypto
import ArcaProtocol
import ArcaSync

/// One user's sync state in arcad's memory while the afterFirstUnlock class is unlocked: the
/// replica rebuilt from the journal, the approvals this device publishes, the reports.
/// Dropped when that class locks (it holds the epoch keys).
final class SyncSession {
    let store: SyncStore
    let signer: SigningKey
    var replica: SyncReplica
    /// The approvals (and circle updates) this device publishes, by device.
    var approvals: [DeviceID: [UInt8]] = [:]
    /// The last head and circle update accepted from each peer (a repeat is a duplicate).
    var lastHeads: [DeviceID: [UInt8]] = [:]
    var lastApprovals: [DeviceID: [UInt8]] = [:]
    /// Refusals and flags for `arca sync status`, oldest first, at most `maximumReports`.
    private(set) var reports: [String] = []
    /// This device's own records, by sequence number − 1.
    private(set) var own: [[UInt8]] = []
    /// This device's latest snapshot (published in its folder), if it ever collected tombstones.
    private(set) var snapshot: [UInt8]?
    /// How much of `replica.journal` and `replica.reports` is already persisted / reported.
    private var journaled = 0
    /// How close to the append limit `persist` measures what it appends (more than a frame).
    static let appendHeadroom = 8 << 20
    /// Records handed to a batch by `takeApplied` (≥ `journaled`; equal outside a batch).
    private var taken = 0
    private var replicaReports = 0
    /// The journal's size, and its size after the last compaction (or replay).
    var journalBytes = 0
    var compactedBytes = 0
    /// The clock source and horizon the replica was made with (a compaction's check replays with them).
    let clockSource: OffsetClock
    let horizonMillis: UInt64

    static let maximumReports = 200

    /// For each primary key, the live circle item that holds it (`Daemon.primaryKeyOwners`),
    /// cached: computing it opens every live item's attributes, and every local change needs it.
    private var ownersCache: [[UInt8]: (ref: ItemRef, version: ItemVersion)]?
    /// The primary keys that more than one live item holds (with `ownersCache`).
    private var contested: Set<[UInt8]> = []
    /// The vault's primary-key tag of circle items' primary keys (`Daemon.sealPending`).
    var primaryKeysByTag: [[UInt8]: [UInt8]] = [:]

    /// The primary-key owners, computed again only after the replica changed.
    func owners() -> [[UInt8]: (ref: ItemRef, version: ItemVersion)] {
        if let ownersCache { return ownersCache }
        let (computed, shared) = Daemon.primaryKeyOwnership(replica)
        ownersCache = computed
        contested = shared
        return computed
    }

    /// Records that this device's own write made `ref`'s new winner the owner of `pk` (it has
    /// the newest clock), or, a tombstone, that `pk` has no owner left unless another live item
    /// holds it too; forgets the cache when that is not known (a merge).
    func noteOwner(_ pk: [UInt8]?, ref: ItemRef) {
        guard let pk, ownersCache != nil, let winner = replica.items[ref]?.winner, !contested.contains(pk) else {
            ownersCache = nil
            return
        }
        if !winner.deleted {
            ownersCache?[pk] = (ref, winner)
        } else if ownersCache?[pk]?.ref == ref {
            ownersCache?[pk] = nil
        }
    }

    func invalidateOwners() { ownersCache = nil }

    var device: DeviceID { replica.device }

    init(
        store: SyncStore, signer: SigningKey, circle: Circle, clockOffsetMilliseconds: Int = 0,
        horizonDays: Int = 30
    ) throws(HandlerError) {
        self.store = store
        self.signer = signer
        let source = OffsetClock(offsetMilliseconds: Int64(clockOffsetMilliseconds))
        clockSource = source
        horizonMillis = UInt64(max(horizonDays, 1)) * 24 * 3600 * 1000
        do {
            replica = try SyncReplica(signer: signer, circle: circle, clock: HybridLogicalClock(source: source))
        } catch {
            throw HandlerError(.internalComponent, "cannot start the sync replica: \(error)")
        }
        replica.horizonMillis = horizonMillis
    }

    /// Replays the journal: every record in order, then the heads and approvals. A restart
    /// thus rebuilds exactly the replica that was saved. A torn last entry (a crash mid-append)
    /// is cut at once (truncated to the last whole entry and fsynced), before anything is
    /// appended after it, whether or not a compaction would succeed.
    func replay() throws(HandlerError) {
        let journal = try store.read()
        var restored = Restored()
        Self.replay(journal.entries, into: &replica, device: device, restored: &restored) { note($0) }
        approvals = restored.approvals
        lastHeads = restored.lastHeads
        snapshot = restored.snapshot
        journaled = replica.journal.count
        taken = journaled
        replicaReports = replica.reports.count
        ownersCache = nil
        own = replica.journal.filter { Self.author(of: $0) == device }
        _ = replica.takeChanges()
        journalBytes = journal.size
        if journal.torn {
            journalBytes = SyncStore.encode(journal.entries).count
            try store.truncateJournal(to: journalBytes)
            note("sync journal: a torn last entry (\(journal.size - journalBytes) bytes) was cut")
        }
        compactedBytes = journalBytes
    }

    /// What a replay restores besides the replica.
    struct Restored {
        var approvals: [DeviceID: [UInt8]] = [:]
        var lastHeads: [DeviceID: [UInt8]] = [:]
        /// The index in the entries of each peer's last accepted head, and of its last accepted
        /// head whose time was kept (`SyncReplica.observe(head:)`).
        var heads: [DeviceID: Int] = [:]
        var timedHeads: [DeviceID: Int] = [:]
        /// The heads a compaction keeps: every other one changes nothing at replay.
        var keptHeads: Set<Int> { Set(heads.values).union(timedHeads.values) }
        var snapshot: [UInt8]?
    }

    /// Replays `entries` into `replica` (this device's), in order.
    static func replay(
        _ entries: [SyncEntry], into replica: inout SyncReplica, device: DeviceID, restored: inout Restored,
        note: (String) -> Void
    ) {
        for (index, entry) in entries.enumerated() {
            switch entry {
            case .record(let bytes):
                do { try replica.apply(bytes) } catch { note("journal record refused at replay: \(error)") }
            case .head(let bytes):
                do {
                    let timed = try replica.observe(head: bytes)
                    if let head = try? SignedHead(parsing: bytes) {
                        restored.lastHeads[head.author] = bytes
                        restored.heads[head.author] = index
                        if timed { restored.timedHeads[head.author] = index }
                    }
                } catch {
                    note("journal head refused at replay: \(error)")
                }
            case .approval(let bytesOfDevice, let bytes):
                if let id = try? DeviceID(bytesOfDevice) { restored.approvals[id] = bytes }
            case .collected(let refs):
                replica.bury(Self.refs(refs))
            case .snapshot(let bytes):
                do {
                    try replica.adopt(snapshot: bytes)
                    if (try? Snapshot(parsing: bytes))?.author == device { restored.snapshot = bytes }
                } catch {
                    note("journal snapshot refused at replay: \(error)")
                }
            case .queued:
                continue
            }
        }
    }

    /// Appends what the replica applied since the last call (and `extra` entries) to the journal.
    /// Records taken by `takeApplied` (in a batch's `extra`) are not counted as journaled until
    /// the append that carries them succeeds.
    func persist(_ extra: [SyncEntry] = []) throws(HandlerError) {
        let entries = Array(replica.journal[taken...]).map { SyncEntry.record($0) } + extra
        // Near the append limit a refused append would wedge sync: compact first, whatever it drops.
        if journalBytes > SyncStore.maximumAppendedLength - Self.appendHeadroom,
            journalBytes + SyncStore.encode(entries).count > SyncStore.maximumAppendedLength
        {
            compactJournal(reason: "an append would pass \(SyncStore.maximumAppendedLength) bytes", force: true)
        }
        do {
            journalBytes += try store.append(entries)
        } catch {
            taken = journaled
            throw error
        }
        own += replica.journal[journaled...].filter { Self.author(of: $0) == device }
        journaled = replica.journal.count
        taken = journaled
        finishPersist()
    }

    /// The records the replica applied since the last call (or `persist`), as journal entries:
    /// a batch puts them among its other entries in the order applied (a snapshot adopted
    /// before a record must be journaled before it, or a replay differs), then persists them
    /// with `persist(_:)`. They count as journaled only once that append succeeds; a batch that
    /// fails before it calls `discardTaken()`, so the next `persist` journals them.
    func takeApplied() -> [SyncEntry] {
        let fresh = Array(replica.journal[taken...])
        taken = replica.journal.count
        return fresh.map { .record($0) }
    }

    /// Forgets what `takeApplied` handed out and was never persisted (the batch failed).
    func discardTaken() { taken = journaled }

    private func finishPersist() {
        for report in replica.reports[replicaReports...] { note(Self.describe(report)) }
        replicaReports = replica.reports.count
        if let reason = compactionReason() { compactJournal(reason: reason) }
    }

    /// Adds a report (a refusal, a flag), dropping the oldest beyond the cap.
    func note(_ message: String) {
        reports.append(message)
        if reports.count > Self.maximumReports { reports.removeFirst(reports.count - Self.maximumReports) }
        Log.warning("uid \(store.uid): sync: \(message)")
    }

    /// This device's records after `after`, as many as fit in one reply next to the head, the
    /// approvals and the snapshot (up to 1 MiB). A first record that does not fit beside the
    /// snapshot goes alone: the snapshot comes with a later pull (it is sent with every one).
    func outbox(after: UInt64) throws(HandlerError) -> SyncOutbox {
        let head: [UInt8]
        do { head = try replica.head().bytes } catch { throw HandlerError(.internalComponent, "cannot sign the head") }
        let published = approvals.sorted { $0.key < $1.key }.map {
            SyncOutboxApproval(device: $0.key.bytes, bytes: $0.value)
        }
        // Per-field framing (lengths, seq numbers) is far below 64 bytes an entry; 4 KiB for the rest.
        let fixed = head.count + published.reduce(0) { $0 + $1.device.count + $1.bytes.count + 64 } + 4096
        var snapshotBytes = snapshot ?? []
        var records: [SyncOutboxRecord] = []
        var size = 0
        var more = false
        if after < UInt64(own.count) {
            for index in Int(after)..<own.count {
                let bytes = own[index]
                let room = min(
                    ProtocolLimits.maximumFrameLength / 2,
                    ProtocolLimits.maximumBodyLength - fixed - snapshotBytes.count)
                if size + bytes.count + 64 > room {
                    if records.isEmpty && !snapshotBytes.isEmpty {
                        snapshotBytes = []
                    } else if !records.isEmpty {
                        more = true
                        break
                    }
                }
                size += bytes.count + 64
                records.append(SyncOutboxRecord(seq: UInt64(index + 1), bytes: bytes))
            }
        }
        return SyncOutbox(
            device: device.bytes, records: records, head: head, approvals: published, more: more,
            snapshot: snapshotBytes)
    }

    /// Signs a fresh approval for every active member but this device (and `except`): how
    /// members learn of a new member, a removal, or a new epoch key.
    func refreshCircleUpdates() throws(HandlerError) -> [SyncEntry] {
        var entries: [SyncEntry] = []
        for member in replica.circle.activeDevices where member != device {
            do {
                let bytes = try Enrollment.approve(member, circle: &replica.circle, signer: signer)
                approvals[member] = bytes
                entries.append(.approval(device: member.bytes, bytes: bytes))
            } catch {
                throw HandlerError(.internalComponent, "cannot sign a circle update: \(error)")
            }
        }
        return entries
    }

    /// Merges a circle update signed by a member: new members, removals (the earliest
    /// cut-off stays), epoch keys. Never un-removes a device.
    func merge(_ update: Circle) {
        for (device, member) in update.members {
            replica.circle.approve(device)
            guard let cutoff = member.removedAfter else { continue }
            let mine = replica.circle.members[device]?.removedAfter
            if mine == nil || cutoff < mine ?? 0 { try? replica.circle.remove(device, lastAccepted: cutoff) }
        }
        // Every key the update carries: a member approved after a rotation opens older records too.
        for epoch in update.epochs {
            if let key = try? update.key(epoch: epoch) { replica.circle.addEpochKey(key, epoch: epoch) }
        }
    }

    /// Collects the tombstones every member that is not dormant acknowledged, and publishes a
    /// snapshot of the replica (a dormant device resyncs from it when it comes back); the journal
    /// entries to append after this batch's records (none when nothing was collected).
    func collectTombstones() -> [SyncEntry] {
        let dormant = replica.dormantMembers
        let refs = replica.collectTombstones()
        guard !refs.isEmpty else { return [] }
        Log.info("uid \(store.uid): sync: \(refs.count) tombstones collected, \(dormant.count) dormant devices")
        do {
            let made = try replica.makeSnapshot()
            snapshot = made.bytes
            return [.collected(refs.flatMap(\.bytes)), .snapshot(made.bytes)]
        } catch {
            // The burial stands (journaled); peers that are not dormant collect it themselves.
            note("cannot make a snapshot: \(error)")
            return [.collected(refs.flatMap(\.bytes))]
        }
    }

    static func refs(_ bytes: [UInt8]) -> [ItemRef] {
        stride(from: 0, to: bytes.count - bytes.count % 16, by: 16).compactMap {
            try? ItemRef(Array(bytes[$0..<$0 + 16]))
        }
    }

    static func author(of record: [UInt8]) -> DeviceID? { (try? SyncRecord(parsing: record))?.header.author }

    static func describe(_ report: SyncReport) -> String {
        switch report {
        case .clockAhead(let device, let seq):
            "record \(seq) of device \(device.short) has a clock more than 5 minutes ahead (accepted)"
        case .refused(let error): error.description
        case .resynced(let device, let items):
            "resynced from the snapshot of device \(device.short): \(items) items deleted elsewhere while this "
                + "device was away stay deleted (its edits of them are conflict siblings)"
        case .headAhead(let device, let wall):
            "the head of device \(device.short) has a time (\(wall) ms) more than 5 minutes ahead "
                + "(accepted; its time is not used for dormancy)"
        case .headTimeBack(let device, let seen, let got):
            "the head of device \(device.short) went back in time from \(seen) to \(got) ms (an old copy, or its "
                + "clock was set back; accepted, its time is not used for dormancy)"
        }
    }
}

/// The system clock moved by a fixed offset (`sync_clock_offset_ms`, for skew tests).
struct OffsetClock: ClockSource {
    let offsetMilliseconds: Int64

    func nowMillis() -> UInt64 {
        let now = Int64(clamping: SystemClock().nowMillis())
        return UInt64(clamping: max(0, now + offsetMilliseconds))
    }
}
