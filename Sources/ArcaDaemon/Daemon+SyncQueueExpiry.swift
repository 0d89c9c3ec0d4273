import ArcaProtocol
import ArcaSync

/// One file kept in the queue, decoded from its entry. A file that waits for a circle update
/// carries the time it was queued (`SyncQueueLimits.timedFlag`); one queued before that flag
/// existed carries none and counts as queued at time 0 (it expires at the next look).
struct QueuedFile {
    let file: SyncFile
    let waiting: Bool
    /// When it was queued (Unix ms); only kept for a waiting file.
    let since: UInt64

    init(file: SyncFile, waiting: Bool, since: UInt64) {
        self.file = file
        self.waiting = waiting
        self.since = since
    }

    /// nil for the counters kept in the queue (drops, expiries) and for an unknown kind.
    init?(kind: UInt8, author: [UInt8], bytes: [UInt8]) {
        guard kind != SyncQueueLimits.droppedKind, kind != SyncQueueLimits.expiredKind else { return nil }
        let flags = SyncQueueLimits.waitingFlag | SyncQueueLimits.timedFlag
        guard let fileKind = SyncFileKind(rawValue: kind & ~flags) else { return nil }
        waiting = kind & SyncQueueLimits.waitingFlag != 0
        var body = bytes
        var time: UInt64 = 0
        if kind & SyncQueueLimits.timedFlag != 0 {
            var r = ByteReader(bytes)
            guard let t = try? r.u64("queued at") else { return nil }
            time = t
            body = Array(bytes.dropFirst(8))
        }
        since = time
        file = SyncFile(kind: fileKind, author: author, bytes: body)
    }

    /// The queue entry: a waiting file with its time.
    var entry: SyncEntry {
        guard waiting else { return .queued(kind: file.kind.rawValue, author: file.author, bytes: file.bytes) }
        var w = ByteWriter()
        w.u64(since)
        w.raw(file.bytes)
        let kind = file.kind.rawValue | SyncQueueLimits.waitingFlag | SyncQueueLimits.timedFlag
        return .queued(kind: kind, author: file.author, bytes: w.bytes)
    }
}

extension SyncQueueLimits {
    static var waitingDescription: String {
        "\(waitingFiles) files (or \(waitingBytes >> 20) MiB) already wait for a circle update that names "
            + "their device or key epoch; each waits at most \(waitingMillis / 3_600_000) hours"
    }
}

/// Expiry of the files that wait for a circle update (issue 17, review of the horizon work):
/// a file whose author or key epoch no circle update names can be dropped into the folder by
/// anyone who writes there; kept forever, such files would hold the queue's space for good.
extension Daemon {
    /// arcad's wall clock as sync sees it (`sync_clock_offset_ms` included, for tests).
    func syncNowMillis() -> UInt64 {
        OffsetClock(offsetMilliseconds: Int64(config.syncClockOffsetMilliseconds)).nowMillis()
    }

    /// The queue's entries after dropping the waiting files older than
    /// `SyncQueueLimits.waitingMillis` at `now`; the queue is rewritten (atomically) only when
    /// some expired, their number added to the queue's expiry count and reported.
    func expireWaiting(_ store: SyncStore, state: UserState, now: UInt64) throws(HandlerError) -> [SyncEntry] {
        let entries = try store.entries(queue: true)
        var kept: [SyncEntry] = []
        var expired = 0
        var count: UInt32 = 0
        for entry in entries {
            guard case .queued(let kind, let author, let bytes) = entry else { continue }
            if kind == SyncQueueLimits.expiredKind {
                count = Self.expiredCount(bytes)
                continue
            }
            if let queued = QueuedFile(kind: kind, author: author, bytes: bytes), queued.waiting,
                Self.hasExpired(since: queued.since, now: now)
            {
                expired += 1
                continue
            }
            kept.append(entry)
        }
        guard expired > 0 else { return entries }
        count = count &+ UInt32(clamping: expired)
        kept.append(Self.expiredMarker(count))
        try store.replaceQueue(with: kept)
        let report =
            "\(expired) files that waited more than \(SyncQueueLimits.waitingMillis / 3_600_000) hours for a circle "
            + "update naming their device or key epoch expired (\(count) in all)"
        if let session = state.sync { session.note(report) } else { Log.warning("uid \(state.uid): sync: \(report)") }
        return kept
    }

    /// Whether a file queued at `since` has waited too long at `now`; a time more than a wait
    /// ahead of `now` (the clock went back, or a forged time) counts as expired too.
    static func hasExpired(since: UInt64, now: UInt64) -> Bool {
        now >= since ? now - since > SyncQueueLimits.waitingMillis : since - now > SyncQueueLimits.waitingMillis
    }

    /// The queue entry counting `count` expired files in all (the last one in the queue counts).
    static func expiredMarker(_ count: UInt32) -> SyncEntry {
        var marker = ByteWriter()
        marker.u32(count)
        return .queued(kind: SyncQueueLimits.expiredKind, author: [UInt8](repeating: 0, count: 32), bytes: marker.bytes)
    }

    static func expiredCount(_ bytes: [UInt8]) -> UInt32 {
        var r = ByteReader(bytes)
        return (try? r.u32("expired count")) ?? 0
    }

    /// The files waiting for a circle update now, and how many expired in all.
    func waitingCounts(_ store: SyncStore) throws(HandlerError) -> (waiting: UInt32, expired: UInt32) {
        var waiting: UInt32 = 0
        var expired: UInt32 = 0
        for case .queued(let kind, let author, let bytes) in try store.entries(queue: true) {
            if kind == SyncQueueLimits.expiredKind {
                expired = Self.expiredCount(bytes)
            } else if QueuedFile(kind: kind, author: author, bytes: bytes)?.waiting == true {
                waiting += 1
            }
        }
        return (waiting, expired)
    }
}
