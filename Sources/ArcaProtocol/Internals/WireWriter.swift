/// Appends big-endian primitives to a frame. Encoding runs twice: once
/// `measuring` (validates every limit and counts bytes), then once writing into
/// an array reserved to the exact size, so the array never grows and never
/// leaves a stale copy of a secret behind in a freed buffer.
struct WireWriter {
    /// The bytes written so far (empty while measuring).
    private(set) var bytes: [UInt8] = []
    /// Number of bytes written or measured so far.
    private(set) var count = 0
    private let measuring: Bool

    /// A writer that only counts.
    static func measurer() -> WireWriter { WireWriter(measuring: true, capacity: 0) }

    /// A writer into an array of exactly `capacity` bytes.
    static func writer(capacity: Int) -> WireWriter { WireWriter(measuring: false, capacity: capacity) }

    private init(measuring: Bool, capacity: Int) {
        self.measuring = measuring
        if !measuring { bytes.reserveCapacity(capacity) }
    }

    mutating func u8(_ value: UInt8) {
        count += 1
        if !measuring { bytes.append(value) }
    }

    mutating func u16(_ value: UInt16) {
        u8(UInt8(truncatingIfNeeded: value >> 8))
        u8(UInt8(truncatingIfNeeded: value))
    }

    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { u8(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { u8(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    mutating func bool(_ value: Bool) { u8(value ? 1 : 0) }

    /// Raw bytes with no length prefix (the magic).
    mutating func raw(_ value: [UInt8]) {
        count += value.count
        if !measuring { bytes.append(contentsOf: value) }
    }

    /// A u32 length, then the bytes; at most `limit` bytes.
    mutating func bytes(_ value: [UInt8], field: String, limit: Int) throws(ProtocolError) {
        guard value.count <= limit else { throw .fieldTooLong(field: field, length: value.count, limit: limit) }
        u32(UInt32(value.count))
        raw(value)
    }

    /// A length-prefixed field that must be exactly `length` bytes long.
    mutating func fixed(_ value: [UInt8], field: String, length: Int) throws(ProtocolError) {
        guard value.count == length else { throw .wrongLength(field: field, length: value.count, expected: length) }
        u32(UInt32(value.count))
        raw(value)
    }

    /// A u32 length, then the UTF-8 bytes; at most `limit` bytes.
    mutating func string(_ value: String, field: String, limit: Int) throws(ProtocolError) {
        let utf8 = value.utf8
        guard utf8.count <= limit else { throw .fieldTooLong(field: field, length: utf8.count, limit: limit) }
        u32(UInt32(utf8.count))
        count += utf8.count
        if !measuring { bytes.append(contentsOf: utf8) }
    }

    /// A presence byte (0 or 1), then the value when present.
    mutating func optional<T>(
        _ value: T?, _ body: (inout WireWriter, T) throws(ProtocolError) -> Void
    ) throws(ProtocolError) {
        guard let value else { return u8(0) }
        u8(1)
        try body(&self, value)
    }

    /// A u32 count, then each element; at most `limit` elements.
    mutating func list<T>(
        _ values: [T], field: String, limit: Int, _ body: (inout WireWriter, T) throws(ProtocolError) -> Void
    ) throws(ProtocolError) {
        guard values.count <= limit else { throw .fieldTooLong(field: field, length: values.count, limit: limit) }
        u32(UInt32(values.count))
        for value in values { try body(&self, value) }
    }
}
