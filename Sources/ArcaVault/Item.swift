import ArcaCrypto
import ArcaProtocol

/// The Keychain item classes Arca stores (`kSecClass`): one type shared with the
/// wire protocol, so that no layer translates between two copies.
public typealias ItemClass = ArcaProtocol.ItemClass

/// When an item's secret may be read (`kSecAttrAccessible`). Each class has its
/// own key; a class whose key is not loaded is *locked*. Shared with the wire
/// protocol; `whenPasscodeSetThisDeviceOnly` behaves as
/// `whenUnlockedThisDeviceOnly`, since every Arca vault is password-protected.
public typealias Accessibility = ArcaProtocol.Accessibility

extension ArcaProtocol.Accessibility {
    /// True for the classes whose key mixes in the host secret.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock: false
        case .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: true
        }
    }

    /// The classes that a screen lock drops (every "when unlocked" class).
    public static let whenUnlockedClasses: Set<Accessibility> = [
        .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly,
    ]

    /// Every class.
    public static let all: Set<Accessibility> = Set(allCases)

    /// The sub-key label of this class; changing it would orphan every item.
    var keyLabel: String {
        switch self {
        case .whenUnlocked: "arca.class.v1/whenUnlocked"
        case .afterFirstUnlock: "arca.class.v1/afterFirstUnlock"
        case .whenUnlockedThisDeviceOnly: "arca.class.v1/whenUnlockedThisDeviceOnly"
        case .afterFirstUnlockThisDeviceOnly: "arca.class.v1/afterFirstUnlockThisDeviceOnly"
        case .whenPasscodeSetThisDeviceOnly: "arca.class.v1/whenPasscodeSetThisDeviceOnly"
        }
    }
}

/// The attributes of an item, with Apple's names and meanings. In an item every
/// field the store knows is set; in a query a field that is set must match and a
/// `nil` field matches anything; in an update a set field replaces the item's.
public struct ItemAttributes: Sendable, Equatable, Hashable {
    /// `kSecAttrService` (generic passwords).
    public var service: String?
    /// `kSecAttrAccount`.
    public var account: String?
    /// `kSecAttrLabel`.
    public var label: String?
    /// `kSecAttrDescription`.
    public var description: String?
    /// `kSecAttrComment`.
    public var comment: String?
    /// `kSecAttrGeneric`: application bytes (generic passwords).
    public var generic: [UInt8]?
    /// `kSecAttrCreator`: a four-character code.
    public var creator: UInt32?
    /// `kSecAttrType`: a four-character code.
    public var type: UInt32?
    /// `kSecAttrIsInvisible`.
    public var isInvisible: Bool?
    /// `kSecAttrIsNegative`.
    public var isNegative: Bool?
    /// `kSecAttrCreationDate`, seconds since 1970. Set by the store.
    public var creationDate: Double?
    /// `kSecAttrModificationDate`, seconds since 1970. Set by the store.
    public var modificationDate: Double?
    /// `kSecAttrServer` (internet passwords).
    public var server: String?
    /// `kSecAttrProtocol`, e.g. "htps" (internet passwords).
    public var `protocol`: String?
    /// `kSecAttrPort` (internet passwords).
    public var port: Int?
    /// `kSecAttrPath` (internet passwords).
    public var path: String?
    /// `kSecAttrSecurityDomain` (internet passwords).
    public var securityDomain: String?
    /// `kSecAttrAuthenticationType`, e.g. "dflt" (internet passwords).
    public var authenticationType: String?
    /// `kSecAttrAccessGroup`.
    public var accessGroup: String?
    /// `kSecAttrSynchronizable`. In a query, see `Query.synchronizable`.
    public var synchronizable: Bool?
    /// `kSecAttrAccessible`; `whenUnlocked` when an item is added without it.
    public var accessible: Accessibility?
    /// The freedesktop Secret Service attribute dictionary of an attribute item
    /// (`AttributeItem`); nil on Keychain items. Not matched by `Query`.
    public var secretAttributes: [String: String]?
    /// The content type of an attribute item's secret (`text/plain`…); nil on Keychain items.
    public var contentType: String?

    /// No attribute set.
    public init() {}

    /// Attributes built by setting fields in `body`.
    public init(_ body: (inout ItemAttributes) -> Void) {
        body(&self)
    }

    /// The names of the internet-only attributes that are set.
    var internetOnlyFieldsSet: [String] {
        var names: [String] = []
        if server != nil { names.append("server") }
        if `protocol` != nil { names.append("protocol") }
        if port != nil { names.append("port") }
        if path != nil { names.append("path") }
        if securityDomain != nil { names.append("securityDomain") }
        if authenticationType != nil { names.append("authenticationType") }
        return names
    }

    /// The names of the generic-only attributes that are set.
    var genericOnlyFieldsSet: [String] {
        var names: [String] = []
        if service != nil { names.append("service") }
        if generic != nil { names.append("generic") }
        return names
    }

    /// Overwrites every field that `changes` sets.
    mutating func apply(_ changes: ItemAttributes) {
        if let v = changes.service { service = v }
        if let v = changes.account { account = v }
        if let v = changes.label { label = v }
        if let v = changes.description { description = v }
        if let v = changes.comment { comment = v }
        if let v = changes.generic { generic = v }
        if let v = changes.creator { creator = v }
        if let v = changes.type { type = v }
        if let v = changes.isInvisible { isInvisible = v }
        if let v = changes.isNegative { isNegative = v }
        if let v = changes.server { server = v }
        if let v = changes.protocol { `protocol` = v }
        if let v = changes.port { port = v }
        if let v = changes.path { path = v }
        if let v = changes.securityDomain { securityDomain = v }
        if let v = changes.authenticationType { authenticationType = v }
        if let v = changes.accessGroup { accessGroup = v }
        if let v = changes.synchronizable { synchronizable = v }
        if let v = changes.accessible { accessible = v }
        if let v = changes.secretAttributes { secretAttributes = v }
        if let v = changes.contentType { contentType = v }
    }

    /// True when every field set in `filter` (except synchronizable, which the
    /// query decides) equals this item's; strings compare case-insensitively if asked.
    /// An absent string equals the empty one, as in the primary key.
    func matches(_ filter: ItemAttributes, caseInsensitive: Bool) -> Bool {
        func eq(_ want: String?, _ have: String?) -> Bool {
            guard let want else { return true }
            let have = have ?? ""
            return caseInsensitive ? want.lowercased() == have.lowercased() : want == have
        }
        func eq<T: Equatable>(_ want: T?, _ have: T?) -> Bool { want == nil || want == have }
        return eq(filter.service, service) && eq(filter.account, account) && eq(filter.label, label)
            && eq(filter.description, description) && eq(filter.comment, comment) && eq(filter.generic, generic)
            && eq(filter.creator, creator) && eq(filter.type, type) && eq(filter.isInvisible, isInvisible)
            && eq(filter.isNegative, isNegative) && eq(filter.creationDate, creationDate)
            && eq(filter.modificationDate, modificationDate) && eq(filter.server, server)
            && eq(filter.protocol, `protocol`) && eq(filter.port, port) && eq(filter.path, path)
            && eq(filter.securityDomain, securityDomain) && eq(filter.authenticationType, authenticationType)
            && eq(filter.accessGroup, accessGroup) && eq(filter.accessible, accessible)
    }
}

/// A stable, opaque reference to one item (`kSecValuePersistentRef`): 16 random
/// bytes chosen when the item is added, unchanged by updates.
public struct PersistentReference: Sendable, Equatable, Hashable {
    /// The reference's bytes.
    public let bytes: [UInt8]

    /// Length of a reference.
    public static let length = 16

    /// A reference from bytes a caller kept; throws `VaultError.param` if they cannot be one.
    public init(bytes: [UInt8]) throws {
        guard bytes.count == Self.length else {
            throw VaultError.param("a persistent reference is \(Self.length) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
}

/// An item as the store returns it: the parts the query asked for.
public struct ItemResult: Sendable {
    /// The item's class.
    public let itemClass: ItemClass
    /// Every attribute, if the query asked for them.
    public let attributes: ItemAttributes?
    /// The secret, if the query asked for it.
    public let data: SecretBytes?
    /// The persistent reference, if the query asked for it.
    public let persistentReference: PersistentReference?
}
