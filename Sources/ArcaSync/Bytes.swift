/// Big-endian writer for the record and head formats (and arcad's sync state files).
public struct ByteWriter: Sendable {
    /// What was written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Appends one byte.
    public mutating func u8(_ v: UInt8) { bytes.append(v) }
    /// Appends 2 bytes, big-endian.
    public mutating func u16(_ v: UInt16) { integer(v) }
    /// Appends 4 bytes, big-endian.
    public mutating func u32(_ v: UInt32) { integer(v) }
    /// Appends 8 bytes, big-endian.
    public mutating func u64(_ v: UInt64) { integer(v) }
    /// Appends bytes as they are.
    public mutating func raw(_ b: [UInt8]) { bytes += b }

    /// u32 length ‖ bytes.
    public mutating func lengthPrefixed(_ b: [UInt8]) {
        u32(UInt32(b.count))
        raw(b)
    }

    private mutating func integer<T: FixedWidthInteger>(_ v: T) {
        for shift in stride(from: T.bitWidth - 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: v >> shift))
        }
    }
}

/// Total big-endian reader: every read either returns a value or throws `SyncError.malformed`
/// naming `what` was truncated.
public struct ByteReader: Sendable {
    private let bytes: [UInt8]
    /// How far reading has gone.
    public private(set) var offset = 0

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Bytes not read yet.
    public var remaining: Int { bytes.count - offset }

    /// Reads one byte.
    public mutating func u8(_ what: String) throws -> UInt8 { try raw(1, what)[0] }
    /// Reads 2 bytes, big-endian.
    public mutating func u16(_ what: String) throws -> UInt16 { try integer(what) }
    /// Reads 4 bytes, big-endian.
    public mutating func u32(_ what: String) throws -> UInt32 { try integer(what) }
    /// Reads 8 bytes, big-endian.
    public mutating func u64(_ what: String) throws -> UInt64 { try integer(what) }

    /// Reads `count` bytes.
    public mutating func raw(_ count: Int, _ what: String) throws -> [UInt8] {
        guard count >= 0, count <= remaining else { throw SyncError.malformed("truncated \(what)") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// u32 length ‖ bytes, the length capped at `limit`.
    public mutating func lengthPrefixed(_ what: String, limit: Int) throws -> [UInt8] {
        let n = Int(try u32(what))
        guard n <= limit else { throw SyncError.malformed("\(what) longer than \(limit) bytes") }
        return try raw(n, what)
    }

    /// Throws unless every byte was read.
    public func expectEnd(_ what: String) throws {
        guard remaining == 0 else { throw SyncError.malformed("\(remaining) trailing bytes after \(what)") }
    }

    private mutating func integer<T: FixedWidthInteger>(_ what: String) throws -> T {
        try raw(T.bitWidth / 8, what).reduce(T(0)) { $0 << 8 | T($1) }
    }
}
