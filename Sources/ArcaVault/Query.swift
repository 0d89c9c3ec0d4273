/// Which items a query selects by `kSecAttrSynchronizable`.
public enum SynchronizableMatch: Sendable, Equatable {
    /// Only items that are not synchronizable: the meaning of a query without the attribute.
    case no
    /// Only synchronizable items.
    case yes
    /// Both (`kSecAttrSynchronizableAny`).
    case any
}

/// How many items a query returns (`kSecMatchLimit`).
public enum MatchLimit: Sendable, Equatable {
    /// The first match (`kSecMatchLimitOne`), the default.
    case one
    /// Every match (`kSecMatchLimitAll`).
    case all
    /// At most this many.
    case count(Int)

    var maximum: Int {
        switch self {
        case .one: 1
        case .all: Int.max
        case .count(let n): n
        }
    }
}

/// A search, with the semantics of `SecItemCopyMatching`, `SecItemUpdate` and
/// `SecItemDelete`: every attribute set in `attributes` must match.
public struct Query: Sendable {
    /// The class searched (`kSecClass`).
    public var itemClass: ItemClass
    /// The attributes to match; `nil` fields match anything. Its `synchronizable`
    /// field, when set, overrides `synchronizable` below (true → `.yes`, false → `.no`).
    public var attributes: ItemAttributes
    /// Synchronizable selection; `.no` unless the query says otherwise, as on Apple platforms.
    public var synchronizable: SynchronizableMatch
    /// Restricts the search to one item (`kSecValuePersistentRef` in a query).
    public var persistentReference: PersistentReference?
    /// How many items to return (copy only; update and delete act on every match).
    public var matchLimit: MatchLimit
    /// Return the secret (`kSecReturnData`).
    public var returnData: Bool
    /// Return the attributes (`kSecReturnAttributes`).
    public var returnAttributes: Bool
    /// Return the persistent reference (`kSecReturnPersistentRef`).
    public var returnPersistentReference: Bool
    /// Compare strings case-insensitively (`kSecMatchCaseInsensitive`).
    public var caseInsensitive: Bool

    /// A query of `itemClass` matching `attributes`, limit one, returning nothing.
    public init(
        _ itemClass: ItemClass, attributes: ItemAttributes = ItemAttributes(),
        synchronizable: SynchronizableMatch = .no, persistentReference: PersistentReference? = nil,
        matchLimit: MatchLimit = .one, returnData: Bool = false, returnAttributes: Bool = false,
        returnPersistentReference: Bool = false, caseInsensitive: Bool = false
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.synchronizable = synchronizable
        self.persistentReference = persistentReference
        self.matchLimit = matchLimit
        self.returnData = returnData
        self.returnAttributes = returnAttributes
        self.returnPersistentReference = returnPersistentReference
        self.caseInsensitive = caseInsensitive
    }

    /// The synchronizable selection after `attributes.synchronizable` is applied.
    var effectiveSynchronizable: SynchronizableMatch {
        switch attributes.synchronizable {
        case .some(true): .yes
        case .some(false): .no
        case .none: synchronizable
        }
    }
}
