/// Why a frame was rejected. Every malformed input maps to exactly one case;
/// arcad answers none of them and closes the connection.
///
/// Field names in the cases are the static names the codec uses (`"service"`,
/// `"secret"`, …): they never carry message content, so an error may be logged.
public enum ProtocolError: Error, Sendable, Equatable, Hashable {
    /// The first four bytes are not `ARCA`.
    case badMagic
    /// The header names a protocol version this build does not speak.
    case unsupportedVersion(UInt16)
    /// The header names a message kind that does not exist.
    case unknownKind(UInt16)
    /// The kind exists but travels the other way (a reply where a request was
    /// expected, or the reverse).
    case unexpectedKind(MessageKind)
    /// The body length in the header (or of an encoded message) exceeds
    /// ``ProtocolLimits/maximumBodyLength``.
    case frameTooLarge(length: Int, limit: Int)
    /// The body ended in the middle of a field (a short read).
    case truncated
    /// The body has bytes left after the message's last field.
    case trailingBytes(count: Int)
    /// A length-prefixed field or a list is longer than its limit.
    case fieldTooLong(field: String, length: Int, limit: Int)
    /// A fixed-size field (a 32-byte key, a 16-byte salt) has another length.
    case wrongLength(field: String, length: Int, expected: Int)
    /// A field that must be a string is not valid UTF-8.
    case invalidUTF8(field: String)
    /// A one-of tag (a bool, an optional marker, a class, a value type, a flag
    /// set, a status code…) has a value outside its defined set.
    case unknownTag(field: String, value: UInt32)
    /// An attribute map names the same attribute twice.
    case duplicateAttribute(AttributeTag)
    /// An attribute carries a value of another type than its tag defines.
    case attributeTypeMismatch(AttributeTag, found: AttributeValueType)
    /// A value is well-formed but outside its range (a match limit of 0).
    case invalidValue(field: String)
}

extension ProtocolError: CustomStringConvertible {
    /// A one-line, log-safe explanation.
    public var description: String {
        switch self {
        case .badMagic: return "bad magic (not an Arca frame)"
        case .unsupportedVersion(let v): return "unsupported protocol version \(v)"
        case .unknownKind(let k): return "unknown message kind \(k)"
        case .unexpectedKind(let k): return "unexpected message kind \(k)"
        case .frameTooLarge(let length, let limit): return "frame body of \(length) bytes exceeds \(limit)"
        case .truncated: return "truncated message"
        case .trailingBytes(let count): return "\(count) trailing bytes after the message"
        case .fieldTooLong(let field, let length, let limit): return "\(field): \(length) exceeds the limit \(limit)"
        case .wrongLength(let field, let length, let expected):
            return "\(field): length \(length), expected \(expected)"
        case .invalidUTF8(let field): return "\(field): invalid UTF-8"
        case .unknownTag(let field, let value): return "\(field): unknown tag \(value)"
        case .duplicateAttribute(let tag): return "duplicate attribute \(tag)"
        case .attributeTypeMismatch(let tag, let found): return "attribute \(tag) cannot hold a \(found)"
        case .invalidValue(let field): return "\(field): value out of range"
        }
    }
}
