import ArcaProtocol

/// One `SecItem…` dictionary, read into the protocol's terms. Keys are
/// Apple's raw strings; values may be Swift or Foundation objects, optionals
/// included (`kCFBooleanTrue` is implicitly unwrapped).
package struct SecItemQuery: Equatable {
    /// `kSecClass`, when present.
    package var itemClass: ItemClass?
    /// The attribute keys (`kSecAttr…`).
    package var attributes: AttributeMap = [:]
    /// `kSecValueData`.
    package var valueData: [UInt8]?
    /// `kSecValuePersistentRef`.
    package var persistentRef: [UInt8]?
    /// `kSecReturn…`.
    package var returnFlags: ReturnFlags = []
    /// `kSecMatchLimit`; `nil` when absent.
    package var matchLimit: MatchLimit?
    /// `kSecMatchCaseInsensitive`.
    package var caseInsensitive = false
    /// `kSecAttrSynchronizable: kSecAttrSynchronizableAny`.
    package var synchronizableAny = false

    /// Why a dictionary was refused (errSecParam); the message names the key.
    package struct Invalid: Error, Equatable {
        /// What was wrong.
        package var message: String
    }

    /// The protocol query this dictionary asks for, with a default limit.
    package func query(defaultLimit: MatchLimit) throws(Invalid) -> Query {
        guard let itemClass else { throw Invalid(message: "kSecClass is missing") }
        return Query(
            itemClass: itemClass, attributes: attributes, persistentRef: persistentRef,
            matchLimit: matchLimit ?? defaultLimit, returnFlags: returnFlags, caseInsensitive: caseInsensitive,
            synchronizableAny: synchronizableAny)
    }

    /// Raw key → attribute tag, for every `kSecAttr…` key.
    package static let attributeKeys: [String: AttributeTag] = [
        "svce": .service, "acct": .account, "labl": .label, "desc": .description, "icmt": .comment,
        "gena": .generic, "crtr": .creator, "type": .type, "invi": .isInvisible, "nega": .isNegative,
        "cdat": .creationDate, "mdat": .modificationDate, "srvr": .server, "ptcl": .protocol, "port": .port,
        "path": .path, "sdmn": .securityDomain, "atyp": .authenticationType, "agrp": .accessGroup,
        "sync": .synchronizable, "pdmn": .accessible,
    ]

    /// Attribute tag → raw key (the inverse of ``attributeKeys``).
    package static let attributeNames: [AttributeTag: String] = Dictionary(
        uniqueKeysWithValues: attributeKeys.map { ($0.value, $0.key) })

    /// Accessibility constant ↔ class. The deprecated "always" values map onto
    /// after-first-unlock, their nearest meaning on Linux.
    package static let accessibilityValues: [String: ArcaProtocol.Accessibility] = [
        "ak": .whenUnlocked, "ck": .afterFirstUnlock, "aku": .whenUnlockedThisDeviceOnly,
        "cku": .afterFirstUnlockThisDeviceOnly, "akpu": .whenPasscodeSetThisDeviceOnly,
        "dk": .afterFirstUnlock, "dku": .afterFirstUnlockThisDeviceOnly,
    ]

    /// Class → its `kSecAttrAccessible` constant.
    package static func accessibilityName(_ a: ArcaProtocol.Accessibility) -> String {
        switch a {
        case .whenUnlocked: "ak"
        case .afterFirstUnlock: "ck"
        case .whenUnlockedThisDeviceOnly: "aku"
        case .afterFirstUnlockThisDeviceOnly: "cku"
        case .whenPasscodeSetThisDeviceOnly: "akpu"
        }
    }

    /// Reads `entries` (key, value) pairs of a dictionary.
    package init(_ entries: [(key: Any, value: Any)]) throws(Invalid) {
        for (rawKey, rawValue) in entries {
            guard let key = Value.string(rawKey) else { throw Invalid(message: "a key is not a string") }
            guard let value = Value.unwrap(rawValue) else { continue }  // nil values are absent
            try set(key, value)
        }
    }

    private mutating func set(_ key: String, _ value: Any) throws(Invalid) {
        func bool() throws(Invalid) -> Bool {
            guard let b = Value.bool(value) else { throw Invalid(message: "\(key) must be a boolean") }
            return b
        }
        func bytes() throws(Invalid) -> [UInt8] {
            guard let d = Value.bytes(value) else { throw Invalid(message: "\(key) must be Data") }
            return d
        }
        func flag(_ f: ReturnFlags) throws(Invalid) {
            if try bool() { returnFlags.insert(f) } else { returnFlags.remove(f) }
        }
        switch key {
        case "class":
            switch Value.string(value) {
            case "genp": itemClass = .genericPassword
            case "inet": itemClass = .internetPassword
            default: throw Invalid(message: "kSecClass: only generic and internet passwords are supported")
            }
        case "v_Data": valueData = try bytes()
        case "v_PersistentRef": persistentRef = try bytes()
        case "v_Ref": throw Invalid(message: "kSecValueRef: password items have no references on Linux")
        case "r_Data": try flag(.data)
        case "r_Attributes", "r_Ref": try flag(.attributes)
        case "r_PersistentRef": try flag(.persistentRef)
        case "m_CaseInsensitive": caseInsensitive = try bool()
        case "nleg": return
        case "m_Limit":
            if let s = Value.string(value) {
                switch s {
                case "m_LimitOne": matchLimit = .one
                case "m_LimitAll": matchLimit = .all
                default: throw Invalid(message: "kSecMatchLimit: unknown value")
                }
            } else if let n = Value.integer(value), n >= 1, let count = UInt32(exactly: n) {
                matchLimit = n == 1 ? .one : .count(count)
            } else {
                throw Invalid(
                    message: "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
            }
        case "sync" where Value.string(value) == "syna":
            synchronizableAny = true
        default:
            guard let tag = Self.attributeKeys[key] else { throw Invalid(message: "unknown key \(key)") }
            attributes[tag] = try Self.attributeValue(tag, value, key: key)
        }
    }

    private static func attributeValue(_ tag: AttributeTag, _ value: Any, key: String) throws(Invalid)
        -> AttributeValue
    {
        switch tag.valueType {
        case .string:
            guard let s = Value.string(value) else { throw Invalid(message: "\(key) must be a string") }
            return .string(s)
        case .bytes:
            guard let b = Value.bytes(value) else { throw Invalid(message: "\(key) must be Data") }
            return .bytes(b)
        case .uint32:
            if let n = Value.integer(value), let u = UInt32(exactly: n) { return .uint32(u) }
            // A four-character code written as text ('aapl').
            if tag != .port, let s = Value.string(value), s.utf8.count == 4 {
                return .uint32(s.utf8.reduce(0) { $0 << 8 | UInt32($1) })
            }
            throw Invalid(message: "\(key) must be a number from 0 to 4294967295")
        case .bool:
            guard let b = Value.bool(value) else { throw Invalid(message: "\(key) must be a boolean") }
            return .bool(b)
        case .date:
            guard let d = Value.date(value), let micros = Int64(exactly: (d * 1e6).rounded()) else {
                throw Invalid(message: "\(key) must be a Date within ±292,000 years of 1970")
            }
            return .date(microsecondsSinceEpoch: micros)
        case .accessibility:
            guard let s = Value.string(value), let a = accessibilityValues[s] else {
                throw Invalid(message: "\(key) must be one of the kSecAttrAccessible… values")
            }
            return .accessibility(a)
        case .itemClass:
            throw Invalid(message: "\(key) is not an attribute")
        }
    }
}
