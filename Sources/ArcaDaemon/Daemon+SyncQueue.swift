import ArcaProtocol
import ArcaSync

/// The bounds of a user's incoming queue (`<uid>.queue`, root-owned, in arcad's state
/// directory): files pushed while the vault is locked, while a join waits, or from an author
/// or epoch no circle update has named yet. A user can drop any number of files into their
/// own synced folder, so what arcad keeps for them is bounded: a file that does not parse or
/// whose signature fails is refused before it is kept, each author keeps at most
/// `filesPerAuthor` files, at most `authors` authors are kept, and the whole queue holds at
/// most `bytes`. A file over a bound is refused with a message saying so (the agent offers it
/// again later, so a real member's backlog is delayed, not lost) and the drop is reported in
/// `arca sync status`. Files that wait for a circle update are retried only when one applies,
/// so a full queue costs no work per request; they are bounded apart (`waitingFiles`,
/// `waitingBytes`) and expire after `waitingMillis` (`Daemon+SyncQueueExpiry.swift`), so that
/// files no circle update ever names cannot hold the queue.
enum SyncQueueLimits {
    static let filesPerAuthor = 2_048
    static let authors = 16
    static let bytes = 16 << 20
    /// The largest approval (circle update) kept: a few hundred bytes per member.
    static let approvalBytes = 64 << 10

    /// Set in a queue entry's kind byte: the file waits for a circle update, not an unlock.
    static let waitingFlag: UInt8 = 0x80
    /// A queue entry's kind that counts files dropped (its author; u32 count), never a file.
    static let droppedKind: UInt8 = 0x7F
    /// A queue entry's kind that counts the waiting files that expired (u32 count), never a file.
    static let expiredKind: UInt8 = 0x7E
    /// Set with `waitingFlag`: the entry's bytes start with the time it was queued (u64 Unix ms).
    static let timedFlag: UInt8 = 0x40
    /// How long a file may wait for a circle update: a member's files wait only until the update
    /// that names their author or epoch, which its approver publishes with them (a day).
    static let waitingMillis: UInt64 = 24 * 3600 * 1000
    /// The most files (and bytes) that wait for a circle update at once: the rest of the queue
    /// stays for what arrives while the vault is locked.
    static let waitingFiles = 512
    static let waitingBytes = 4 << 20

    static var description: String {
        "at most \(filesPerAuthor) files per device, \(authors) devices, \(bytes >> 20) MiB"
    }
}

extension Daemon {
    /// Keeps `files` in the user's queue within `SyncQueueLimits`; one outcome each (`queued`
    /// with `message`, or `refused`). `waiting`: the files wait for a circle update, within
    /// `waitingFiles` and `waitingBytes` too: beyond them deferred (the agent offers them again),
    /// or with `boundWaiting` false (files taken from the queue, which no agent offers again)
    /// the oldest beyond them dropped, counted as expired. `since`: when a file taken from the
    /// queue was first queued (kept, so waiting again does not restart its day); others: now.
    func enqueue(
        _ files: [SyncFile], waiting: Bool, message: String, state: UserState, store: SyncStore,
        boundWaiting: Bool = true, since: [[UInt8]: UInt64] = [:]
    ) throws(HandlerError) -> [SyncFileOutcome] {
        guard !files.isEmpty else { return [] }
        var perAuthor: [[UInt8]: Int] = [:]
        var total = 0
        var held: Set<[UInt8]> = []
        var waitingCount = 0
        var waitingSize = 0
        var expiredCount: UInt32 = 0
        let now = syncNowMillis()
        for case .queued(let kind, let author, let bytes) in try expireWaiting(store, state: state, now: now) {
            if kind == SyncQueueLimits.expiredKind { expiredCount = Self.expiredCount(bytes) }
            total += bytes.count + author.count + 6
            guard let queued = QueuedFile(kind: kind, author: author, bytes: bytes) else { continue }
            perAuthor[author, default: 0] += 1
            held.insert(queued.file.bytes)
            if queued.waiting {
                waitingCount += 1
                waitingSize += bytes.count + author.count + 6
            }
        }
        var kept: [SyncEntry] = []
        var outcomes: [SyncFileOutcome] = []
        var dropped: [[UInt8]: UInt32] = [:]
        var deferredWaiting: [[UInt8]: UInt32] = [:]
        let overflow =
            waiting && !boundWaiting ? Self.oldestOverBound(files, count: waitingCount, size: waitingSize) : []
        for (index, file) in files.enumerated() {
            if overflow.contains(index) {
                outcomes.append(
                    SyncFileOutcome(code: .refused, message: "expired: \(SyncQueueLimits.waitingDescription)"))
                continue
            }
            if let refusal = Self.queueRefusal(file) {
                outcomes.append(SyncFileOutcome(code: .refused, message: refusal))
                continue
            }
            if held.contains(file.bytes) {
                outcomes.append(SyncFileOutcome(code: .queued, message: message))
                continue
            }
            let count = perAuthor[file.author] ?? 0
            let size = file.bytes.count + file.author.count + 6 + (waiting ? 8 : 0)
            if waiting {
                guard waitingCount < SyncQueueLimits.waitingFiles, waitingSize + size <= SyncQueueLimits.waitingBytes
                else {
                    deferredWaiting[file.author, default: 0] += 1
                    outcomes.append(
                        SyncFileOutcome(code: .deferred, message: "not kept: \(SyncQueueLimits.waitingDescription)"))
                    continue
                }
            }
            guard count < SyncQueueLimits.filesPerAuthor,
                count > 0 || perAuthor.count < SyncQueueLimits.authors,
                total + size <= SyncQueueLimits.bytes
            else {
                dropped[file.author, default: 0] += 1
                outcomes.append(
                    SyncFileOutcome(
                        code: .deferred,
                        message: "not kept: the queue of waiting files is full (\(SyncQueueLimits.description))"))
                continue
            }
            perAuthor[file.author] = count + 1
            total += size
            held.insert(file.bytes)
            if waiting {
                waitingCount += 1
                waitingSize += size
            }
            kept.append(QueuedFile(file: file, waiting: waiting, since: since[file.bytes] ?? now).entry)
            outcomes.append(SyncFileOutcome(code: .queued, message: message))
        }
        for (author, count) in dropped.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let report = Self.dropReport(author: author, count: count)
            if let session = state.sync {
                session.note(report)
            } else if total + author.count + 10 <= SyncQueueLimits.bytes {
                // Reported at the next unlock; the marker counts towards the bound too.
                total += author.count + 10
                var marker = ByteWriter()
                marker.u32(count)
                kept.append(.queued(kind: SyncQueueLimits.droppedKind, author: author, bytes: marker.bytes))
            } else {
                Log.warning("uid \(state.uid): sync: \(report)")
            }
        }
        for (author, count) in deferredWaiting.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let report =
                "\(count) files from device \(Self.short(author)) not kept: \(SyncQueueLimits.waitingDescription)"
            if let session = state.sync {
                session.note(report)
            } else {
                Log.warning("uid \(state.uid): sync: \(report)")
            }
        }
        if !overflow.isEmpty {
            let count = expiredCount &+ UInt32(clamping: overflow.count)
            kept.append(Self.expiredMarker(count))
            let report =
                "\(overflow.count) files waiting for a circle update dropped, the oldest beyond the bound "
                + "(\(SyncQueueLimits.waitingFiles) files, \(SyncQueueLimits.waitingBytes >> 20) MiB), counted as "
                + "expired (\(count) in all)"
            if let session = state.sync {
                session.note(report)
            } else {
                Log.warning("uid \(state.uid): sync: \(report)")
            }
        }
        try store.append(kept, toQueue: true)
        return outcomes
    }

    /// The indices of the oldest of `files` (in queue order) that do not fit within the waiting
    /// bound beside `count` files of `size` bytes already waiting: the newest are kept.
    static func oldestOverBound(_ files: [SyncFile], count: Int, size: Int) -> Set<Int> {
        var count = count
        var size = size
        var over: Set<Int> = []
        for index in files.indices.reversed() {
            let bytes = files[index].bytes.count + files[index].author.count + 14
            if count < SyncQueueLimits.waitingFiles, size + bytes <= SyncQueueLimits.waitingBytes {
                count += 1
                size += bytes
            } else {
                over.insert(index)
            }
        }
        return over
    }

    /// Takes the files to apply out of the queue: every file kept for an unlock or a join, and
    /// those waiting for a circle update only with `retryWaiting` (one was applied). The others
    /// stay as they are; drops counted while locked go to the reports.
    /// `since`: when each waiting file taken was queued (by its bytes).
    func takeQueue(_ store: SyncStore, state: UserState, retryWaiting: Bool) throws(HandlerError) -> (
        files: [SyncFile], since: [[UInt8]: UInt64]
    ) {
        var take: [SyncFile] = []
        var since: [[UInt8]: UInt64] = [:]
        var keep: [SyncEntry] = []
        var reports: [String] = []
        for entry in try expireWaiting(store, state: state, now: syncNowMillis()) {
            guard case .queued(let kind, let author, let bytes) = entry else { continue }
            if kind == SyncQueueLimits.droppedKind {
                var marker = ByteReader(bytes)
                let count = (try? marker.u32("drop count")) ?? 0
                reports.append(Self.dropReport(author: author, count: count))
                continue
            }
            guard let queued = QueuedFile(kind: kind, author: author, bytes: bytes) else {
                keep.append(entry)  // the expiry count
                continue
            }
            if queued.waiting && !retryWaiting {
                keep.append(entry)
            } else {
                take.append(queued.file)
                if queued.waiting { since[queued.file.bytes] = queued.since }
            }
        }
        guard !take.isEmpty || !reports.isEmpty else { return ([], [:]) }
        for report in reports {
            if let session = state.sync {
                session.note(report)
            } else {
                Log.warning("uid \(state.uid): sync: \(report)")
            }
        }
        // Taken files that must wait again are queued anew by the caller.
        try store.replaceQueue(with: keep)
        return (take, since)
    }

    /// The number of files in the queue (drop and expiry counts excluded).
    static func queuedFileCount(_ store: SyncStore) throws(HandlerError) -> Int {
        try store.entries(queue: true).filter {
            guard case .queued(let kind, let author, let bytes) = $0 else { return false }
            return QueuedFile(kind: kind, author: author, bytes: bytes) != nil
        }.count
    }

    /// Why `file` is not worth keeping, checked without any key: it does not parse, names
    /// another author than its folder's, or its signature fails; nil if it may be kept.
    static func queueRefusal(_ file: SyncFile) -> String? {
        guard let author = try? DeviceID(file.author) else { return "the folder's device id is not 32 bytes" }
        switch file.kind {
        case .record:
            guard let record = try? SyncRecord(parsing: file.bytes) else { return "not a sync record; not kept" }
            guard record.header.author == author else {
                return "a record in \(author.short)'s folder names another author"
            }
            guard record.signatureIsValid else { return SyncError.forged(author).description }
        case .head:
            guard let head = try? SignedHead(parsing: file.bytes) else { return "not a sync head; not kept" }
            guard head.author == author else { return "a head in \(author.short)'s folder names another author" }
            guard head.signatureIsValid else { return SyncError.forged(author).description }
        case .approval:
            guard file.bytes.count <= SyncQueueLimits.approvalBytes else { return "approval too large; not kept" }
        case .snapshot:
            guard let snapshot = try? Snapshot(parsing: file.bytes) else { return "not a sync snapshot; not kept" }
            guard snapshot.author == author else {
                return "a snapshot in \(author.short)'s folder names another author"
            }
            guard snapshot.signatureIsValid else { return SyncError.forged(author).description }
        }
        return nil
    }

    static func dropReport(author: [UInt8], count: UInt32) -> String {
        "\(count) files from device \(short(author)) dropped: the queue was full (\(SyncQueueLimits.description))"
    }
}
