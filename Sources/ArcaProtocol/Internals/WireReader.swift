/// Reads big-endian primitives from one frame body, checking every length
/// against its limit *before* reading or allocating, and against the bytes
/// that remain.
struct WireReader {
    private let buffer: ArraySlice<UInt8>
    private var position: Int
    private let end: Int

    /// A reader over `body`, a slice holding exactly one message body.
    init(_ body: ArraySlice<UInt8>) {
        buffer = body
        position = body.startIndex
        end = body.endIndex
    }

    /// Bytes not yet read.
    var remaining: Int { end - position }

    mutating func u8() throws(ProtocolError) -> UInt8 {
        guard position < end else { throw .truncated }
        defer { position += 1 }
        return buffer[position]
    }

    mutating func u16() throws(ProtocolError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated }
        defer { position += 2 }
        return UInt16(buffer[position]) << 8 | UInt16(buffer[position + 1])
    }

    mutating func u32() throws(ProtocolError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated }
        var value: UInt32 = 0
        for i in 0..<4 { value = value << 8 | UInt32(buffer[position + i]) }
        position += 4
        return value
    }

    mutating func u64() throws(ProtocolError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated }
        var value: UInt64 = 0
        for i in 0..<8 { value = value << 8 | UInt64(buffer[position + i]) }
        position += 8
        return value
    }

    mutating func i64() throws(ProtocolError) -> Int64 { Int64(bitPattern: try u64()) }

    /// A byte that must be 0 or 1.
    mutating func bool(field: String) throws(ProtocolError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let other: throw .unknownTag(field: field, value: UInt32(other))
        }
    }

    /// The u32 length prefix of a field, checked against `limit` and then
    /// against the bytes remaining.
    private mutating func length(field: String, limit: Int) throws(ProtocolError) -> Int {
        let length = Int(try u32())
        guard length <= limit else { throw .fieldTooLong(field: field, length: length, limit: limit) }
        guard length <= remaining else { throw .truncated }
        return length
    }

    /// Length-prefixed bytes of at most `limit`. The result is the only copy
    /// the codec makes; the caller's frame buffer still holds the original.
    mutating func bytes(field: String, limit: Int) throws(ProtocolError) -> [UInt8] {
        let length = try length(field: field, limit: limit)
        defer { position += length }
        return Array(buffer[position..<position + length])
    }

    /// Length-prefixed bytes that must be exactly `length` long.
    mutating func fixed(field: String, length expected: Int) throws(ProtocolError) -> [UInt8] {
        let length = Int(try u32())
        guard length == expected else { throw .wrongLength(field: field, length: length, expected: expected) }
        guard length <= remaining else { throw .truncated }
        defer { position += length }
        return Array(buffer[position..<position + length])
    }

    /// A length-prefixed string of at most `limit` bytes of valid UTF-8.
    mutating func string(field: String, limit: Int) throws(ProtocolError) -> String {
        let length = try length(field: field, limit: limit)
        defer { position += length }
        guard let string = String(validating: buffer[position..<position + length], as: UTF8.self) else {
            throw .invalidUTF8(field: field)
        }
        return string
    }

    /// A presence byte (0 or 1), then the value when present.
    mutating func optional<T>(
        field: String, _ body: (inout WireReader) throws(ProtocolError) -> T
    ) throws(ProtocolError) -> T? {
        guard try bool(field: field) else { return nil }
        return try body(&self)
    }

    /// A u32 count of at most `limit`, then each element. Every element takes
    /// at least one byte, so a count beyond the bytes remaining is a short
    /// body, detected before anything is allocated.
    mutating func list<T>(
        field: String, limit: Int, _ body: (inout WireReader) throws(ProtocolError) -> T
    ) throws(ProtocolError) -> [T] {
        let count = Int(try u32())
        guard count <= limit else { throw .fieldTooLong(field: field, length: count, limit: limit) }
        guard count <= remaining else { throw .truncated }
        var values: [T] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try body(&self)) }
        return values
    }

    /// Succeeds only when the whole body has been read.
    func finish() throws(ProtocolError) {
        guard remaining == 0 else { throw .trailingBytes(count: remaining) }
    }
}
