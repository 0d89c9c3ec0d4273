import ArcaCrypto
import ArcaProtocol
import Synchronization

/// Backups on their way between arcad and `arca` in chunks (a backup may be far larger than one
/// 2 MiB frame), kept in arcad's memory so that arcad never opens a path a user names.
///
/// Rules, each checked here and nowhere else:
/// * one staging per uid, owned by the connection that started it: another connection (of the
///   same user or root) can neither read nor feed it, and cannot start a second one while it
///   lives; it is dropped (zeroed) when that connection closes, when it is used up, or when a
///   new one replaces it after `idleSeconds` without use;
/// * an import declares its whole length with its first piece, each later piece must start
///   exactly where the previous one ended (no gap, no overlap, nothing past the end);
/// * a staging is at most `perUserLimit` bytes, all stagings together at most `totalLimit`,
///   counted at the length declared (and reserved) up front, so arcad never grows past them.
final class BackupStaging: Sendable {
    /// Which way the bytes go.
    enum Direction: Sendable { case export, `import` }

    /// Why a staging request is refused: the one input of ``Daemon/stagingError(_:)``.
    enum Refusal: Error, Equatable {
        /// Another connection holds this uid's staging.
        case busy
        /// More than one user may stage.
        case tooLarge(length: UInt64, limit: Int)
        /// Every user's stagings together would pass the total cap: `held` bytes are staged
        /// (declared) for other users, and `length` more were asked for.
        case full(held: Int, length: UInt64, limit: Int)
        /// Nothing staged for this connection (never started, dropped, or the other direction).
        case nothingStaged(Direction)
        /// A piece that does not start where the previous one ended, or a different total.
        case outOfOrder(expected: UInt64, got: UInt64)
        /// The total differs from the one the first piece declared.
        case totalChanged(declared: UInt64, got: UInt64)
        /// An import finished before every byte arrived.
        case incomplete(received: UInt64, total: UInt64)
    }

    private struct Slot {
        var connection: UInt64
        var direction: Direction
        var bytes: [UInt8]
        /// The length declared (import) or sealed (export): what the caps count.
        var total: Int
        /// Bytes read back so far (export).
        var position: Int
        var touched: Double
    }

    /// The largest staging of one user.
    let perUserLimit: Int
    /// The most all stagings may hold together.
    let totalLimit: Int
    /// After this long without use, a staging may be replaced by a new one of another connection.
    let idleSeconds: Double
    private let slots = Mutex<[UInt32: Slot]>([:])

    /// Staging with these caps.
    init(perUserLimit: Int, totalLimit: Int, idleSeconds: Double = 600) {
        self.perUserLimit = perUserLimit
        self.totalLimit = totalLimit
        self.idleSeconds = idleSeconds
    }

    /// Bytes counted against the caps now (declared or sealed lengths of every staging).
    var reservedBytes: Int { slots.withLock { $0.values.reduce(0) { $0 + $1.total } } }

    /// The memory `uid`'s staging holds now (its buffer's capacity), for tests.
    func heldCapacity(uid: UInt32) -> Int? { slots.withLock { $0[uid]?.bytes.capacity } }

    /// Whether `length` bytes may be staged by `connection` for `uid`, replacing its own staging.
    /// Checked before an export is sealed, so a vault too large to stage costs no sealing.
    func checkRoom(uid: UInt32, connection: UInt64, length: UInt64) throws(Refusal) {
        try slots.withLock { slots throws(Refusal) in _ = try room(&slots, uid: uid, connection: connection, length) }
    }

    /// Keeps a sealed backup for `connection` to read; replaces this connection's earlier staging.
    func stageExport(_ bytes: inout [UInt8], uid: UInt32, connection: UInt64) throws(Refusal) {
        do {
            try slots.withLock { slots throws(Refusal) in
                let count = try room(&slots, uid: uid, connection: connection, UInt64(bytes.count))
                slots[uid] = Slot(
                    connection: connection, direction: .export, bytes: bytes, total: count, position: 0,
                    touched: Clock.monotonicSeconds())
                bytes = []
            }
        } catch {
            Self.wipeUsed(&bytes)
            throw error
        }
    }

    /// The next piece (at most `maximumBackupChunkLength`) of the export staged by `connection`,
    /// which must be read from `offset`, where the previous piece ended. The last piece drops it.
    func readExport(uid: UInt32, connection: UInt64, offset: UInt64) throws(Refusal) -> [UInt8] {
        try slots.withLock { slots throws(Refusal) -> [UInt8] in
            guard var slot = slots[uid], slot.connection == connection, slot.direction == .export else {
                throw .nothingStaged(.export)
            }
            guard offset == UInt64(slot.position) else {
                throw .outOfOrder(expected: UInt64(slot.position), got: offset)
            }
            let end = min(slot.bytes.count, slot.position + ProtocolLimits.maximumBackupChunkLength)
            let piece = Array(slot.bytes[slot.position..<end])
            slot.position = end
            slot.touched = Clock.monotonicSeconds()
            if end == slot.bytes.count {
                Self.wipeUsed(&slot.bytes)
                slots[uid] = nil
            } else {
                slots[uid] = slot
            }
            return piece
        }
    }

    /// Adds a piece of an import for `connection`; offset 0 starts a new one (replacing this
    /// connection's earlier staging). Returns the bytes received so far.
    func stageImport(uid: UInt32, connection: UInt64, total: UInt64, offset: UInt64, chunk: [UInt8])
        throws(Refusal) -> UInt64
    {
        try slots.withLock { slots throws(Refusal) -> UInt64 in
            var slot: Slot
            if offset == 0 {
                let count = try room(&slots, uid: uid, connection: connection, total)
                // Nothing is allocated for the declared length: memory grows with the pieces
                // that arrive (``grow(_:by:)``), so a length arcad cannot hold never traps.
                slot = Slot(
                    connection: connection, direction: .import, bytes: [], total: count, position: 0, touched: 0)
            } else {
                guard let existing = slots[uid], existing.connection == connection, existing.direction == .import
                else { throw .nothingStaged(.import) }
                guard total == UInt64(existing.total) else {
                    throw .totalChanged(declared: UInt64(existing.total), got: total)
                }
                // The codec already refused a piece past `total`; the end is checked again here.
                guard offset == UInt64(existing.bytes.count), existing.bytes.count + chunk.count <= existing.total
                else { throw .outOfOrder(expected: UInt64(existing.bytes.count), got: offset) }
                // Taken out of the dictionary, so that appending does not copy the buffer.
                guard let taken = slots.removeValue(forKey: uid) else { throw .nothingStaged(.import) }
                slot = taken
            }
            Self.grow(&slot, by: chunk.count)
            slot.bytes += chunk
            slot.touched = Clock.monotonicSeconds()
            slots[uid] = slot
            return UInt64(slot.bytes.count)
        }
    }

    /// Takes the complete import staged by `connection` out of the staging (the caller zeroes it).
    /// An incomplete one stays, so the client may still send what is missing.
    func takeImport(uid: UInt32, connection: UInt64) throws(Refusal) -> [UInt8] {
        try slots.withLock { slots throws(Refusal) -> [UInt8] in
            guard var slot = slots[uid], slot.connection == connection, slot.direction == .import else {
                throw .nothingStaged(.import)
            }
            guard slot.bytes.count == slot.total else {
                throw .incomplete(received: UInt64(slot.bytes.count), total: UInt64(slot.total))
            }
            slots[uid] = nil
            let bytes = slot.bytes
            slot.bytes = []
            return bytes
        }
    }

    /// Drops (zeroing) every staging of a closed connection.
    func drop(connection: UInt64) {
        slots.withLock { slots in
            for (uid, slot) in slots where slot.connection == connection { Self.remove(uid, from: &slots) }
        }
    }

    /// Whether `uid`'s staging may be replaced by `connection` with `length` bytes: checks the caps
    /// and drops the old staging. Returns the length as an Int.
    private func room(_ slots: inout [UInt32: Slot], uid: UInt32, connection: UInt64, _ length: UInt64)
        throws(Refusal) -> Int
    {
        guard length <= UInt64(perUserLimit) else { throw .tooLarge(length: length, limit: perUserLimit) }
        if let existing = slots[uid] {
            let idle = Clock.monotonicSeconds() - existing.touched >= idleSeconds
            guard existing.connection == connection || idle else { throw .busy }
        }
        let others = slots.reduce(0) { $0 + ($1.key == uid ? 0 : $1.value.total) }
        guard others + Int(length) <= totalLimit else { throw .full(held: others, length: length, limit: totalLimit) }
        Self.remove(uid, from: &slots)
        return Int(length)
    }

    /// Makes room for `count` more bytes: doubling, never past the declared total (appending
    /// alone could double past it), and the old buffer zeroed before it is freed.
    private static func grow(_ slot: inout Slot, by count: Int) {
        let needed = slot.bytes.count + count
        guard slot.bytes.capacity < needed else { return }
        var grown: [UInt8] = []
        grown.reserveCapacity(min(slot.total, max(needed, slot.bytes.count * 2, 1 << 20)))
        grown += slot.bytes
        wipeUsed(&slot.bytes)
        slot.bytes = grown
    }

    private static func remove(_ uid: UInt32, from slots: inout [UInt32: Slot]) {
        guard var slot = slots.removeValue(forKey: uid) else { return }
        Self.wipeUsed(&slot.bytes)
    }
}
