/// The item classes of the Keychain model (`kSecClass`). Raw values are the
/// wire encoding (one byte) and never change.
public enum ItemClass: UInt8, Sendable, CaseIterable, Hashable {
    /// A generic password, `kSecClassGenericPassword` (`genp`).
    case genericPassword = 1
    /// An internet password, `kSecClassInternetPassword` (`inet`).
    case internetPassword = 2
}

/// The accessibility classes (`kSecAttrAccessible`) and their Linux meaning
/// (ARCHITECTURE §4). Raw values are the wire encoding and never change.
public enum Accessibility: UInt8, Sendable, CaseIterable, Hashable {
    /// In the kernel while the user has an unlocked session (the default).
    case whenUnlocked = 1
    /// From the first unlock after boot until reboot.
    case afterFirstUnlock = 2
    /// As `whenUnlocked`, never leaves this machine.
    case whenUnlockedThisDeviceOnly = 3
    /// As `afterFirstUnlock`, never leaves this machine.
    case afterFirstUnlockThisDeviceOnly = 4
    /// As `whenUnlocked`, only for a vault protected by a password; never leaves this machine.
    case whenPasscodeSetThisDeviceOnly = 5
}

/// The type of an attribute value on the wire; one byte before the value.
public enum AttributeValueType: UInt8, Sendable, CaseIterable, Hashable {
    /// u32 length + UTF-8.
    case string = 1
    /// u32 length + bytes.
    case bytes = 2
    /// A big-endian u32.
    case uint32 = 3
    /// One byte, 0 or 1.
    case bool = 4
    /// A big-endian i64: microseconds since 1970-01-01T00:00:00Z.
    case date = 5
    /// One byte: an ``ItemClass`` raw value.
    case itemClass = 6
    /// One byte: an ``Accessibility`` raw value.
    case accessibility = 7
}

/// The item attributes of ARCHITECTURE §4, keyed by a stable numeric tag.
/// Raw values are the wire encoding (big-endian u16) and never change; new
/// attributes get new numbers. Each tag admits exactly one ``valueType``.
public enum AttributeTag: UInt16, Sendable, CaseIterable, Hashable, Comparable {
    /// `kSecClass` — an item class.
    case itemClass = 1
    /// `kSecAttrService` — string.
    case service = 2
    /// `kSecAttrAccount` — string.
    case account = 3
    /// `kSecAttrLabel` — string.
    case label = 4
    /// `kSecAttrDescription` — string.
    case description = 5
    /// `kSecAttrComment` — string.
    case comment = 6
    /// `kSecAttrGeneric` — bytes.
    case generic = 7
    /// `kSecAttrCreator` — a four-character code as u32.
    case creator = 8
    /// `kSecAttrType` — a four-character code as u32.
    case type = 9
    /// `kSecAttrIsInvisible` — bool.
    case isInvisible = 10
    /// `kSecAttrIsNegative` — bool.
    case isNegative = 11
    /// `kSecAttrCreationDate` — date, set by the store.
    case creationDate = 12
    /// `kSecAttrModificationDate` — date, set by the store.
    case modificationDate = 13
    /// `kSecAttrServer` — string.
    case server = 14
    /// `kSecAttrProtocol` — string (Apple's four-letter values, `htps`…).
    case `protocol` = 15
    /// `kSecAttrPort` — u32.
    case port = 16
    /// `kSecAttrPath` — string.
    case path = 17
    /// `kSecAttrSecurityDomain` — string.
    case securityDomain = 18
    /// `kSecAttrAuthenticationType` — string (Apple's four-letter values).
    case authenticationType = 19
    /// `kSecAttrAccessGroup` — string.
    case accessGroup = 20
    /// `kSecAttrSynchronizable` — bool.
    case synchronizable = 21
    /// `kSecAttrAccessible` — an accessibility class.
    case accessible = 22

    /// The only value type this attribute may carry.
    public var valueType: AttributeValueType {
        switch self {
        case .itemClass: return .itemClass
        case .service, .account, .label, .description, .comment, .server, .protocol, .path, .securityDomain,
            .authenticationType, .accessGroup:
            return .string
        case .generic: return .bytes
        case .creator, .type, .port: return .uint32
        case .isInvisible, .isNegative, .synchronizable: return .bool
        case .creationDate, .modificationDate: return .date
        case .accessible: return .accessibility
        }
    }

    /// The name used for this attribute in ``ProtocolError`` cases (`"service"`…).
    public var fieldName: String {
        // Spelled out rather than reflected: reflection metadata may be stripped.
        switch self {
        case .itemClass: return "class"
        case .service: return "service"
        case .account: return "account"
        case .label: return "label"
        case .description: return "description"
        case .comment: return "comment"
        case .generic: return "generic"
        case .creator: return "creator"
        case .type: return "type"
        case .isInvisible: return "isInvisible"
        case .isNegative: return "isNegative"
        case .creationDate: return "creationDate"
        case .modificationDate: return "modificationDate"
        case .server: return "server"
        case .protocol: return "protocol"
        case .port: return "port"
        case .path: return "path"
        case .securityDomain: return "securityDomain"
        case .authenticationType: return "authenticationType"
        case .accessGroup: return "accessGroup"
        case .synchronizable: return "synchronizable"
        case .accessible: return "accessible"
        }
    }

    /// Orders tags by raw value, the order they are encoded in.
    public static func < (lhs: AttributeTag, rhs: AttributeTag) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A typed attribute value.
public enum AttributeValue: Sendable, Hashable {
    /// A UTF-8 string of at most ``ProtocolLimits/maximumStringLength`` bytes.
    case string(String)
    /// Bytes, at most ``ProtocolLimits/maximumBytesAttributeLength``.
    case bytes([UInt8])
    /// An unsigned 32-bit number (port, creator, type).
    case uint32(UInt32)
    /// A boolean.
    case bool(Bool)
    /// Microseconds since 1970-01-01T00:00:00Z (negative before).
    case date(microsecondsSinceEpoch: Int64)
    /// An item class.
    case itemClass(ItemClass)
    /// An accessibility class.
    case accessibility(Accessibility)

    /// The wire type of this value.
    public var type: AttributeValueType {
        switch self {
        case .string: return .string
        case .bytes: return .bytes
        case .uint32: return .uint32
        case .bool: return .bool
        case .date: return .date
        case .itemClass: return .itemClass
        case .accessibility: return .accessibility
        }
    }
}

/// Attributes of an item or a query, keyed by tag. Encoded sorted by tag, so
/// the bytes of a message are deterministic.
public typealias AttributeMap = [AttributeTag: AttributeValue]

extension WireWriter {
    /// A u32 count, then per attribute: u16 tag, u8 value type, value.
    mutating func attributes(_ map: AttributeMap) throws(ProtocolError) {
        u32(UInt32(map.count))
        for tag in map.keys.sorted() {
            guard let value = map[tag] else { continue }
            guard value.type == tag.valueType else { throw .attributeTypeMismatch(tag, found: value.type) }
            u16(tag.rawValue)
            u8(value.type.rawValue)
            let field = tag.fieldName
            switch value {
            case .string(let s): try string(s, field: field, limit: ProtocolLimits.maximumStringLength)
            case .bytes(let b): try bytes(b, field: field, limit: ProtocolLimits.maximumBytesAttributeLength)
            case .uint32(let n): u32(n)
            case .bool(let b): bool(b)
            case .date(let micros): i64(micros)
            case .itemClass(let c): u8(c.rawValue)
            case .accessibility(let a): u8(a.rawValue)
            }
        }
    }
}

extension WireReader {
    /// Reads an attribute map; unknown tags and types, duplicates and values
    /// of the wrong type are errors.
    mutating func attributes() throws(ProtocolError) -> AttributeMap {
        let count = Int(try u32())
        let limit = AttributeTag.allCases.count
        guard count <= limit else { throw .fieldTooLong(field: "attributes", length: count, limit: limit) }
        var map: AttributeMap = [:]
        for _ in 0..<count {
            let rawTag = try u16()
            guard let tag = AttributeTag(rawValue: rawTag) else {
                throw .unknownTag(field: "attribute tag", value: UInt32(rawTag))
            }
            let rawType = try u8()
            guard let type = AttributeValueType(rawValue: rawType) else {
                throw .unknownTag(field: "attribute type", value: UInt32(rawType))
            }
            guard type == tag.valueType else { throw .attributeTypeMismatch(tag, found: type) }
            guard map[tag] == nil else { throw .duplicateAttribute(tag) }
            map[tag] = try value(of: type, field: tag.fieldName)
        }
        return map
    }

    private mutating func value(of type: AttributeValueType, field: String) throws(ProtocolError) -> AttributeValue {
        switch type {
        case .string: return .string(try string(field: field, limit: ProtocolLimits.maximumStringLength))
        case .bytes: return .bytes(try bytes(field: field, limit: ProtocolLimits.maximumBytesAttributeLength))
        case .uint32: return .uint32(try u32())
        case .bool: return .bool(try bool(field: field))
        case .date: return .date(microsecondsSinceEpoch: try i64())
        case .itemClass: return .itemClass(try itemClass())
        case .accessibility: return .accessibility(try accessibility())
        }
    }

    mutating func itemClass() throws(ProtocolError) -> ItemClass {
        let raw = try u8()
        guard let value = ItemClass(rawValue: raw) else { throw .unknownTag(field: "item class", value: UInt32(raw)) }
        return value
    }

    mutating func accessibility() throws(ProtocolError) -> Accessibility {
        let raw = try u8()
        guard let value = Accessibility(rawValue: raw) else {
            throw .unknownTag(field: "accessibility", value: UInt32(raw))
        }
        return value
    }
}
