/// Which vault an item request acts on.
public enum VaultID: Sendable, Hashable {
    /// The vault of a user. arcad allows it to that user and to root.
    case user(uid: UInt32)
    /// The system vault (ARCHITECTURE §8), unlocked with the host key.
    case system
}

/// How many items a query matches (`kSecMatchLimit`).
public enum MatchLimit: Sendable, Hashable {
    /// The first match only (`kSecMatchLimitOne`, the default).
    case one
    /// Every match (`kSecMatchLimitAll`).
    case all
    /// At most this many matches; must be at least 1.
    case count(UInt32)
}

/// What a query returns for each match (`kSecReturnData`,
/// `kSecReturnAttributes`, `kSecReturnPersistentRef`). One byte on the wire;
/// bits outside these three are rejected.
public struct ReturnFlags: OptionSet, Sendable, Hashable {
    /// The raw bit set.
    public let rawValue: UInt8
    /// Wraps a raw bit set.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Return the secret (`kSecReturnData`).
    public static let data = ReturnFlags(rawValue: 1 << 0)
    /// Return the attributes (`kSecReturnAttributes`).
    public static let attributes = ReturnFlags(rawValue: 1 << 1)
    /// Return the persistent reference (`kSecReturnPersistentRef`).
    public static let persistentRef = ReturnFlags(rawValue: 1 << 2)
    /// Every defined bit.
    public static let all: ReturnFlags = [.data, .attributes, .persistentRef]
}

/// A query of the Keychain model: which items (class, attributes to match,
/// or a persistent reference), how many, and what to return.
public struct Query: Sendable, Hashable {
    /// The class searched (`kSecClass`).
    public var itemClass: ItemClass
    /// Attributes that must match; `itemClass` does not belong here.
    public var attributes: AttributeMap
    /// When set, matches only the item with this persistent reference.
    public var persistentRef: [UInt8]?
    /// How many items to match.
    public var matchLimit: MatchLimit
    /// What to return per match (copy-matching; ignored by update and delete).
    public var returnFlags: ReturnFlags
    /// String attributes compare case-insensitively (`kSecMatchCaseInsensitive`).
    public var caseInsensitive: Bool
    /// Match items whatever their `synchronizable` value (`kSecAttrSynchronizableAny`).
    public var synchronizableAny: Bool

    /// A query; by default the first match, returning nothing but success.
    public init(
        itemClass: ItemClass, attributes: AttributeMap = [:], persistentRef: [UInt8]? = nil,
        matchLimit: MatchLimit = .one, returnFlags: ReturnFlags = [], caseInsensitive: Bool = false,
        synchronizableAny: Bool = false
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.persistentRef = persistentRef
        self.matchLimit = matchLimit
        self.returnFlags = returnFlags
        self.caseInsensitive = caseInsensitive
        self.synchronizableAny = synchronizableAny
    }
}

/// The Argon2id parameters of a vault, as stored in its header. `ArcaCrypto`'s
/// `KDFParameters` holds the same values; the daemon converts.
public struct KeyDerivationParameters: Sendable, Hashable {
    /// Argon2 passes (`opsLimit`).
    public var opsLimit: UInt64
    /// Memory in bytes (`memLimit`).
    public var memoryLimit: UInt64
    /// Exactly ``ProtocolLimits/saltLength`` bytes.
    public var salt: [UInt8]

    /// Parameters from their parts.
    public init(opsLimit: UInt64, memoryLimit: UInt64, salt: [UInt8]) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
        self.salt = salt
    }
}

/// The lock classes arcad tracks per user: each is a class key, present or not.
public struct LockClasses: OptionSet, Sendable, Hashable {
    /// The raw bit set (one byte on the wire; other bits are rejected).
    public let rawValue: UInt8
    /// Wraps a raw bit set.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The key of `whenUnlocked` (and its ThisDeviceOnly variants).
    public static let whenUnlocked = LockClasses(rawValue: 1 << 0)
    /// The key of `afterFirstUnlock` (and its ThisDeviceOnly variant).
    public static let afterFirstUnlock = LockClasses(rawValue: 1 << 1)
    /// Every class.
    public static let all: LockClasses = [.whenUnlocked, .afterFirstUnlock]
}

extension WireWriter {
    mutating func vault(_ vault: VaultID) {
        switch vault {
        case .user(let uid):
            u8(1)
            u32(uid)
        case .system: u8(2)
        }
    }

    mutating func query(_ query: Query) throws(ProtocolError) {
        u8(query.itemClass.rawValue)
        try attributes(query.attributes)
        try optional(query.persistentRef) { w, ref throws(ProtocolError) in
            try w.bytes(ref, field: "persistentRef", limit: ProtocolLimits.maximumPersistentRefLength)
        }
        switch query.matchLimit {
        case .one: u8(1)
        case .all: u8(2)
        case .count(let n):
            guard n > 0 else { throw .invalidValue(field: "matchLimit") }
            u8(3)
            u32(n)
        }
        try returnFlags(query.returnFlags)
        bool(query.caseInsensitive)
        bool(query.synchronizableAny)
    }

    mutating func returnFlags(_ flags: ReturnFlags) throws(ProtocolError) {
        guard ReturnFlags.all.isSuperset(of: flags) else {
            throw .unknownTag(field: "returnFlags", value: UInt32(flags.rawValue))
        }
        u8(flags.rawValue)
    }

    mutating func key(_ key: [UInt8], field: String) throws(ProtocolError) {
        try fixed(key, field: field, length: ProtocolLimits.derivedKeyLength)
    }

    mutating func kdf(_ parameters: KeyDerivationParameters) throws(ProtocolError) {
        u64(parameters.opsLimit)
        u64(parameters.memoryLimit)
        try fixed(parameters.salt, field: "salt", length: ProtocolLimits.saltLength)
    }

    mutating func lockClasses(_ classes: LockClasses) throws(ProtocolError) {
        guard LockClasses.all.isSuperset(of: classes) else {
            throw .unknownTag(field: "lockClasses", value: UInt32(classes.rawValue))
        }
        u8(classes.rawValue)
    }
}

extension WireReader {
    mutating func vault() throws(ProtocolError) -> VaultID {
        switch try u8() {
        case 1: return .user(uid: try u32())
        case 2: return .system
        case let other: throw .unknownTag(field: "vault", value: UInt32(other))
        }
    }

    mutating func query() throws(ProtocolError) -> Query {
        let itemClass = try itemClass()
        let attributes = try attributes()
        let persistentRef = try optional(field: "persistentRef") { r throws(ProtocolError) in
            try r.bytes(field: "persistentRef", limit: ProtocolLimits.maximumPersistentRefLength)
        }
        let matchLimit: MatchLimit
        switch try u8() {
        case 1: matchLimit = .one
        case 2: matchLimit = .all
        case 3:
            let n = try u32()
            guard n > 0 else { throw .invalidValue(field: "matchLimit") }
            matchLimit = .count(n)
        case let other: throw .unknownTag(field: "matchLimit", value: UInt32(other))
        }
        return Query(
            itemClass: itemClass, attributes: attributes, persistentRef: persistentRef, matchLimit: matchLimit,
            returnFlags: try returnFlags(), caseInsensitive: try bool(field: "caseInsensitive"),
            synchronizableAny: try bool(field: "synchronizableAny"))
    }

    mutating func returnFlags() throws(ProtocolError) -> ReturnFlags {
        let flags = ReturnFlags(rawValue: try u8())
        guard ReturnFlags.all.isSuperset(of: flags) else {
            throw .unknownTag(field: "returnFlags", value: UInt32(flags.rawValue))
        }
        return flags
    }

    mutating func key(field: String) throws(ProtocolError) -> [UInt8] {
        try fixed(field: field, length: ProtocolLimits.derivedKeyLength)
    }

    mutating func kdf() throws(ProtocolError) -> KeyDerivationParameters {
        KeyDerivationParameters(
            opsLimit: try u64(), memoryLimit: try u64(),
            salt: try fixed(field: "salt", length: ProtocolLimits.saltLength))
    }

    mutating func lockClasses() throws(ProtocolError) -> LockClasses {
        let classes = LockClasses(rawValue: try u8())
        guard LockClasses.all.isSuperset(of: classes) else {
            throw .unknownTag(field: "lockClasses", value: UInt32(classes.rawValue))
        }
        return classes
    }
}
