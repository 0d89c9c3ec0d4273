import ArcaCrypto
import ArcaSync
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One entry of a user's sync journal or incoming queue.
enum SyncEntry: Equatable {
    /// A record applied here (own or a peer's): replaying them in order rebuilds the replica.
    case record([UInt8])
    /// A peer's head this device checked: re-observed at restart, so a rollback stays detected.
    case head([UInt8])
    /// An approval (or circle update) this device publishes for `device`; the last one wins.
    case approval(device: [UInt8], bytes: [UInt8])
    /// Items whose tombstones were collected here (16-byte refs): replayed where they stand, so
    /// the records before them are buried and later ones for those items come as siblings.
    case collected([UInt8])
    /// A pushed file kept while the vault was locked.
    case queued(kind: UInt8, author: [UInt8], bytes: [UInt8])
    /// A snapshot adopted here (a peer's) or published (this device's): replayed where it
    /// stands, so the burials it brought apply to the records before it.
    case snapshot([UInt8])
}

/// arcad's own sync files for one user, in `<state>/sync/` (0700), each 0600 root, never in
/// a user-controlled directory (ARCHITECTURE §12):
///
/// - `<uid>.circle`: the circle (members, removal cut-offs, every epoch key held), AEAD-sealed
///   under `Vault.syncStateKey()` with "arca.sync-circle.v1" ‖ uid as associated data;
///   rewritten atomically (temporary file, fsync, rename).
/// - `<uid>.joining`: the 32-byte id of the member expected to approve this device.
/// - `<uid>.journal`: append-only entries `u8 kind (1 record, 2 head, 3 approval, 5 collected,
///   6 snapshot) | u32 length | bytes` (an approval's bytes start with the 32-byte device; a
///   collection's are 16-byte item refs). Records, heads and snapshots are signed
///   ciphertext already; a torn last entry (a crash mid-append) is ignored, and cut
///   (truncated, fsynced) at the next replay, its bytes kept in `<uid>.journal.torn` (0600, at most
///   1 MiB, replaced by the next cut). Compacted (`SyncSession+Compaction.swift`): rewritten
///   atomically to the entries a replay needs; never read in part (`maximumJournalLength`).
/// - `<uid>.queue`: the same framing, kind 4, `kind u8 ‖ author 32 ‖ file`: pushed files that wait
///   for an unlock; removed once applied.
struct SyncStore {
    let directory: String
    let uid: UInt32

    init(stateDirectory: String, uid: UInt32) {
        directory = "\(stateDirectory)/sync"
        self.uid = uid
    }

    var circlePath: String { "\(directory)/\(uid).circle" }
    var joiningPath: String { "\(directory)/\(uid).joining" }
    var journalPath: String { "\(directory)/\(uid).journal" }
    var queuePath: String { "\(directory)/\(uid).queue" }

    // MARK: Circle

    func saveCircle(_ circle: Circle, key: SecretBytes) throws(HandlerError) {
        var plain = ByteWriter()
        plain.u32(circle.currentEpoch)
        let members = circle.members.values.sorted { $0.device < $1.device }
        plain.u32(UInt32(members.count))
        for m in members {
            plain.raw(m.device.bytes)
            plain.u64(m.removedAfter.map { $0 + 1 } ?? 0)
        }
        var keys: [(UInt32, SecretBytes)] = []
        for epoch in 0...circle.currentEpoch { if let k = try? circle.key(epoch: epoch) { keys.append((epoch, k)) } }
        plain.u32(UInt32(keys.count))
        do {
            for (epoch, k) in keys {
                plain.u32(epoch)
                plain.raw(try KeyWrap.wrap(k, with: key, context: Self.epochContext(uid, epoch)))
            }
            let sealed = try AEAD.seal(plain.bytes, key: key, associatedData: circleContext).combined
            try replace(circlePath, with: sealed)
        } catch let error as HandlerError {
            throw error
        } catch {
            throw HandlerError(.internalComponent, "cannot seal the sync circle: \(error)")
        }
    }

    /// The circle, or nil if none was saved. Altered or another vault's → `errSecDecode`.
    func loadCircle(key: SecretBytes) throws(HandlerError) -> Circle? {
        guard let sealed = try read(circlePath, limit: 1 << 20) else { return nil }
        do {
            var r = ByteReader(try AEAD.openBytes(SealedBox(combined: sealed), key: key, associatedData: circleContext))
            let epoch = try r.u32("epoch")
            var members: [(DeviceID, UInt64)] = []
            for _ in 0..<(try r.u32("member count")) {
                members.append((try DeviceID(try r.raw(32, "member")), try r.u64("removal")))
            }
            var circle: Circle?
            for _ in 0..<(try r.u32("key count")) {
                let e = try r.u32("key epoch")
                let k = try KeyWrap.unwrap(
                    try r.raw(KeyWrap.wrappedLength, "epoch key"), with: key, context: Self.epochContext(uid, e))
                if circle == nil {
                    circle = Circle(devices: [], epoch: e, key: k)
                } else {
                    circle?.addEpochKey(k, epoch: e)
                }
            }
            guard var circle, circle.currentEpoch == epoch else { throw SyncError.malformed("circle epochs") }
            for (device, removed) in members {
                circle.approve(device)
                if removed > 0 { try circle.remove(device, lastAccepted: removed - 1) }
            }
            return circle
        } catch {
            throw HandlerError(
                .decode, "\(circlePath) does not open with this vault's key (damaged or not this vault's)")
        }
    }

    // MARK: Joining

    func saveJoining(approver: DeviceID) throws(HandlerError) { try replace(joiningPath, with: approver.bytes) }

    func loadJoining() throws(HandlerError) -> DeviceID? {
        guard let bytes = try read(joiningPath, limit: 64) else { return nil }
        do { return try DeviceID(bytes) } catch { throw HandlerError(.decode, "\(joiningPath) is damaged") }
    }

    func removeJoining() throws(HandlerError) { try remove(joiningPath) }

    // MARK: Journal and queue

    /// Appends `entries` to the journal (or the queue) and fsyncs it; returns the bytes written.
    /// Refused with a clear error (nothing written) when the file would pass
    /// `maximumAppendedLength`, far below what arcad reads whole.
    @discardableResult
    func append(_ entries: [SyncEntry], toQueue: Bool = false) throws(HandlerError) -> Int {
        guard !entries.isEmpty else { return 0 }
        let bytes = Self.encode(entries)
        let path = toQueue ? queuePath : journalPath
        let fd: Int32
        let size: Int
        do {
            fd = try FileSystem.open(path, O_WRONLY | O_CREAT | O_APPEND, mode: 0o600)
            size = Int(try FileSystem.status(fd).size)
        } catch {
            throw HandlerError(.notAvailable, "cannot write \(path): \(error)")
        }
        defer { close(fd) }
        guard size + bytes.count <= Self.maximumAppendedLength else {
            throw HandlerError(
                .notAvailable,
                "\(path) is \(size) bytes; appending \(bytes.count) would pass \(Self.maximumAppendedLength) "
                    + "(compaction could not shrink it; see arca sync status); refused, nothing was written")
        }
        do {
            try bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try FileSystem.writeAll(fd, raw) }
            }.get()
            try FileSystem.sync(fd)
        } catch {
            // A write cut short (a full disk) leaves torn bytes: cut back to the last whole entry,
            // or the next good append would land after them and the next replay cut it away.
            try? FileSystem.truncate(fd, to: size)
            throw HandlerError(.notAvailable, "cannot write \(path): \(error)")
        }
        return bytes.count
    }

    /// Cuts the journal to its first `length` bytes (a torn last entry) and fsyncs it, after
    /// keeping a copy of the cut bytes (``keepTornTail(from:)``, best effort).
    func truncateJournal(to length: Int) throws(HandlerError) {
        keepTornTail(from: length)
        do {
            let fd = try FileSystem.open(journalPath, O_WRONLY)
            defer { close(fd) }
            try FileSystem.truncate(fd, to: length)
            try FileSystem.sync(fd)
        } catch {
            throw HandlerError(.notAvailable, "cannot cut the torn end of \(journalPath): \(error)")
        }
    }

    /// Where the bytes of the journal's last torn tail are kept for an operator (0600 root).
    var tornPath: String { journalPath + ".torn" }

    /// The most of a torn tail kept in `tornPath` (its first bytes: the entry's kind and length).
    static let maximumTornCopyLength = 1 << 20

    /// Copies the journal's bytes from `offset` on (at most `maximumTornCopyLength`) to
    /// `tornPath`, atomically, replacing the copy of an earlier cut: the cut drops nothing an
    /// operator cannot look at, and the copy never grows past its bound.
    ///
    /// Best effort: a copy that cannot be made (a full disk, a quota, something else at
    /// `tornPath`) is logged and the cut goes on; otherwise the user's sync would stop until
    /// an operator freed the space.
    func keepTornTail(from offset: Int) {
        do throws(HandlerError) {
            let tail: [UInt8]
            do {
                let fd = try FileSystem.open(journalPath, O_RDONLY)
                defer { close(fd) }
                tail = try FileSystem.readPrefix(fd, limit: Self.maximumTornCopyLength, from: offset)
            } catch {
                throw HandlerError(.notAvailable, "cannot read the torn end of \(journalPath): \(error)")
            }
            try replace(tornPath, with: tail)
        } catch {
            // Paths and errno only: the tail's bytes are sealed entries, never printed.
            Log.warning("uid \(uid): the torn end of the sync journal is cut without a copy: \(error.message)")
        }
    }

    /// Every whole entry of the journal (or the queue), in order.
    func entries(queue: Bool = false) throws(HandlerError) -> [SyncEntry] {
        try read(queue: queue).entries
    }

    /// The journal (or the queue): every whole entry in order, the file's size, and whether it
    /// ends in a torn entry (a crash mid-append; ignored, and cut at the next replay).
    /// A file that cannot be read whole is refused with an error saying so, never read in part.
    func read(queue: Bool = false) throws(HandlerError) -> (entries: [SyncEntry], size: Int, torn: Bool) {
        let path = queue ? queuePath : journalPath
        guard let bytes = try Self.readWhole(path, limit: Self.maximumJournalLength) else { return ([], 0, false) }
        var r = ByteReader(bytes)
        var out: [SyncEntry] = []
        while r.remaining > 0 {
            guard let kind = try? r.u8("kind"), let body = try? r.lengthPrefixed("entry", limit: Int(Int32.max)) else {
                return (out, bytes.count, true)
            }
            switch kind {
            case 1: out.append(.record(body))
            case 2: out.append(.head(body))
            case 3 where body.count >= 32: out.append(.approval(device: Array(body[..<32]), bytes: Array(body[32...])))
            case 4 where body.count >= 33:
                out.append(.queued(kind: body[0], author: Array(body[1..<33]), bytes: Array(body[33...])))
            case 5 where body.count % 16 == 0: out.append(.collected(body))
            case 6: out.append(.snapshot(body))
            default: throw HandlerError(.decode, "\(path) holds an unknown entry; refused")
            }
        }
        return (out, bytes.count, false)
    }

    /// Replaces the journal with `entries` atomically (a temporary file 0600, fsync, rename,
    /// fsync of the directory): a crash leaves the old journal or the new one, and a temporary
    /// file left behind is ignored, then replaced by the next compaction. Returns the new size.
    @discardableResult
    func replaceJournal(with entries: [SyncEntry]) throws(HandlerError) -> Int {
        let bytes = Self.encode(entries)
        try replace(journalPath, with: bytes)
        return bytes.count
    }

    /// The largest journal or queue arcad reads: the most one read(2) returns on Linux. A larger
    /// file is refused whole (compaction keeps a journal far below it).
    static let maximumJournalLength = 0x7FFF_F000

    /// The largest journal or queue arcad appends to: a quarter of what it reads, so a journal
    /// that cannot be compacted stops growing (loudly) long before it could not be read.
    static let maximumAppendedLength = maximumJournalLength / 4

    static func encode(_ entries: [SyncEntry]) -> [UInt8] {
        var bytes: [UInt8] = []
        for entry in entries {
            let (kind, body): (UInt8, [UInt8])
            switch entry {
            case .record(let b): (kind, body) = (1, b)
            case .head(let b): (kind, body) = (2, b)
            case .approval(let device, let b): (kind, body) = (3, device + b)
            case .queued(let k, let author, let b): (kind, body) = (4, [k] + author + b)
            case .collected(let refs): (kind, body) = (5, refs)
            case .snapshot(let b): (kind, body) = (6, b)
            }
            var entry = ByteWriter()
            entry.u8(kind)
            entry.lengthPrefixed(body)
            bytes += entry.bytes
        }
        return bytes
    }

    func removeQueue() throws(HandlerError) { try remove(queuePath) }

    /// Replaces the queue with `entries` atomically (none: the file goes).
    func replaceQueue(with entries: [SyncEntry]) throws(HandlerError) {
        guard !entries.isEmpty else { return try removeQueue() }
        try replace(queuePath, with: Self.encode(entries))
    }

    /// Removes every sync file of the user (tests, and a user deleted from the machine).
    func removeAll() throws(HandlerError) {
        let temporaries = [journalPath + ".tmp", queuePath + ".tmp", tornPath + ".tmp"]
        for path in [circlePath, joiningPath, journalPath, queuePath, recoveryPath, tornPath] + temporaries {
            try remove(path)
        }
    }

    // MARK: Files

    private var circleContext: [UInt8] {
        var w = ByteWriter()
        w.raw(Array("arca.sync-circle.v1".utf8))
        w.u32(uid)
        return w.bytes
    }

    private static func epochContext(_ uid: UInt32, _ epoch: UInt32) -> [UInt8] {
        var w = ByteWriter()
        w.raw(Array("arca.sync-circle.v1/epoch".utf8))
        w.u32(uid)
        w.u32(epoch)
        return w.bytes
    }

    private func read(_ path: String, limit: Int) throws(HandlerError) -> [UInt8]? {
        try Self.readPrivate(path, limit: limit)
    }

    /// Up to `limit` bytes of arcad's own file at `path`, or nil if there is none. A file that
    /// group or others may read, a symlink, or another owner's file is refused.
    static func readPrivate(_ path: String, limit: Int) throws(HandlerError) -> [UInt8]? {
        guard let (fd, size) = try openPrivate(path) else { return nil }
        defer { close(fd) }
        do { return try FileSystem.readPrefix(fd, limit: min(limit, size + 1)) } catch {
            throw HandlerError(.notAvailable, "cannot read \(path): \(error)")
        }
    }

    /// All of arcad's own file at `path`, or nil if there is none; refused (never read in part)
    /// when it is larger than `limit` or a read returns less than its size.
    static func readWhole(_ path: String, limit: Int) throws(HandlerError) -> [UInt8]? {
        guard let (fd, size) = try openPrivate(path) else { return nil }
        defer { close(fd) }
        guard size <= limit else {
            throw HandlerError(
                .notAvailable,
                "\(path) is \(size) bytes, more than arcad reads (\(limit)); refused, nothing was changed")
        }
        let bytes: [UInt8]
        do { bytes = try FileSystem.readPrefix(fd, limit: size + 1) } catch {
            throw HandlerError(.notAvailable, "cannot read \(path): \(error)")
        }
        guard bytes.count == size else {
            throw HandlerError(
                .notAvailable, "\(path): read \(bytes.count) of its \(size) bytes; refused, nothing was changed")
        }
        return bytes
    }

    /// arcad's own file at `path`, opened for reading, and its size (the caller closes it); nil
    /// if there is none. A file that group or others may read, a symlink, or another owner's
    /// file is refused.
    private static func openPrivate(_ path: String) throws(HandlerError) -> (Int32, Int)? {
        guard try StateDirectory.existingFile(path) else { return nil }
        let fd: Int32
        let status: FileDescriptor.Status
        do {
            fd = try FileSystem.open(path, O_RDONLY)
        } catch {
            throw HandlerError(.notAvailable, "cannot read \(path): \(error)")
        }
        do { status = try FileSystem.status(fd) } catch {
            close(fd)
            throw HandlerError(.notAvailable, "cannot read \(path): \(error)")
        }
        guard status.permissions & 0o077 == 0 else {
            close(fd)
            throw HandlerError(.notAvailable, "\(path) is readable by group or others; refused")
        }
        return (fd, Int(status.size))
    }

    private func replace(_ path: String, with bytes: [UInt8]) throws(HandlerError) {
        try Self.writeAtomically(path, bytes, directory: directory)
    }

    /// Writes `bytes` to `path` (0600) atomically (`StateDirectory.writeAtomically`).
    static func writeAtomically(_ path: String, _ bytes: [UInt8], directory: String) throws(HandlerError) {
        do {
            try StateDirectory.writeAtomically(path, directory: directory) { fd in
                try FileSystem.replaceContent(fd, with: bytes)
            }
        } catch {
            throw HandlerError(.notAvailable, "cannot write \(path): \(error)")
        }
    }

    private func remove(_ path: String) throws(HandlerError) {
        do { try FileSystem.removeIfPresent(path) } catch { throw HandlerError(.notAvailable, "\(error)") }
    }
}
