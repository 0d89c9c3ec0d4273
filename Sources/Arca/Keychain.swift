import ArcaProtocol
import FoundationEssentials

/// The Keychain for Swift programs on Linux: items of one service (generic
/// passwords) or one server (internet passwords) in the caller's vault, read
/// from the kernel keyring when unlocked and written through arcad.
///
/// ```swift
/// let keychain = Keychain(service: "com.example.app")
/// try keychain.set("s3cr3t", key: "token")
/// let token = try keychain.get("token")   // nil when absent; throws when locked
/// ```
///
/// A `Keychain` is an immutable value: configuration methods return copies,
/// and one value may be used from many tasks at once.
public struct Keychain: Sendable {
    /// The item class this keychain reads and writes.
    public enum ItemClass: Sendable, Hashable {
        /// Generic passwords of a service (`kSecClassGenericPassword`).
        case genericPassword
        /// Internet passwords of a server (`kSecClassInternetPassword`).
        case internetPassword
    }

    /// The item class.
    public let itemClass: ItemClass
    /// `kSecAttrService` (generic passwords).
    public let service: String?
    /// `kSecAttrServer` (internet passwords).
    public let server: String?
    /// `kSecAttrProtocol` (internet passwords).
    public let protocolType: ProtocolType?
    /// `kSecAttrAuthenticationType` (internet passwords).
    public let authenticationType: AuthenticationType?
    /// `kSecAttrAccessGroup`: a namespace within the user's vault; `nil` reads
    /// every group and writes the default one.
    public let accessGroup: String?
    /// Accessibility of the items this keychain writes.
    public private(set) var accessibility: Accessibility = .whenUnlocked
    /// Whether the items this keychain writes (and reads) are synchronizable.
    public private(set) var synchronizable = false
    /// `kSecAttrLabel` of the items this keychain writes.
    public private(set) var label: String?
    /// `kSecAttrComment` of the items this keychain writes.
    public private(set) var comment: String?
    /// Where items are read and written (socket, kernel reads).
    package private(set) var store = ItemStore()

    /// Generic passwords of `service`, in the default access group.
    public init(service: String) {
        self.init(service: service, accessGroup: nil)
    }

    /// Generic passwords of `service` in `accessGroup`.
    public init(service: String, accessGroup: String?) {
        itemClass = .genericPassword
        self.service = service
        self.accessGroup = accessGroup
        server = nil
        protocolType = nil
        authenticationType = nil
    }

    /// Generic passwords of `service` in the system vault (ARCHITECTURE §8): a
    /// service reads the items root granted to its uid or group, from its
    /// persistent keyring first (no socket round trip), else from arcad.
    /// Writes are root's only.
    ///
    /// ```swift
    /// let password = try Keychain.system(service: "postgresql").get("postgres")
    /// ```
    public static func system(service: String) -> Keychain {
        var keychain = Keychain(service: service, accessGroup: nil)
        keychain.store.systemVault = true
        return keychain
    }

    /// Internet passwords of `server`, one per account.
    public init(server: String, protocolType: ProtocolType, authenticationType: AuthenticationType = .default) {
        itemClass = .internetPassword
        self.server = server
        self.protocolType = protocolType
        self.authenticationType = authenticationType
        service = nil
        accessGroup = nil
    }

    /// A copy that writes items of `accessibility`.
    public func accessibility(_ accessibility: Accessibility) -> Keychain {
        with(\.accessibility, accessibility)
    }

    /// A copy that reads and writes synchronizable (or not) items. A synchronizable
    /// item may leave the machine, so writes of a synchronizable keychain with a
    /// ThisDeviceOnly ``accessibility(_:)`` throw ``KeychainError/Code/param``
    /// (errSecParam, -50), as on Apple platforms.
    public func synchronizable(_ synchronizable: Bool) -> Keychain {
        with(\.synchronizable, synchronizable)
    }

    /// A copy that labels the items it writes.
    public func label(_ label: String) -> Keychain {
        with(\.label, label)
    }

    /// A copy that sets this comment on the items it writes.
    public func comment(_ comment: String) -> Keychain {
        with(\.comment, comment)
    }

    /// A copy that talks to arcad at `path` instead of `ARCA_SOCKET` or
    /// `/run/arca/arcad.sock`.
    public func socketPath(_ path: String) -> Keychain {
        with(\.store.socketPath, path)
    }

    /// A copy whose reads skip the kernel keyring and always ask arcad (for
    /// measurements and diagnosis; the kernel path is the fast one).
    package func kernelReads(_ enabled: Bool) -> Keychain {
        with(\.store.kernelReads, enabled)
    }

    /// A copy with one setting changed: every builder above is this one line.
    private func with<Value>(_ setting: WritableKeyPath<Keychain, Value>, _ value: Value) -> Keychain {
        var copy = self
        copy[keyPath: setting] = value
        return copy
    }

    // MARK: - Queries

    var wireClass: ArcaProtocol.ItemClass {
        itemClass == .genericPassword ? .genericPassword : .internetPassword
    }

    /// The attributes that select this keychain's items (and one of them with `key`).
    func selector(key: String?) -> AttributeMap {
        var map: AttributeMap = [:]
        switch itemClass {
        case .genericPassword:
            if let service { map[.service] = .string(service) }
        case .internetPassword:
            if let server { map[.server] = .string(server) }
            if let protocolType { map[.protocol] = .string(protocolType.rawValue) }
            if let authenticationType { map[.authenticationType] = .string(authenticationType.rawValue) }
        }
        if let accessGroup { map[.accessGroup] = .string(accessGroup) }
        if synchronizable { map[.synchronizable] = .bool(true) }
        if let key { map[.account] = .string(key) }
        return map
    }

    /// A query for this keychain's items.
    func query(key: String?, limit: MatchLimit = .one, returning flags: ReturnFlags = []) -> Query {
        Query(itemClass: wireClass, attributes: selector(key: key), matchLimit: limit, returnFlags: flags)
    }

    /// The attributes written with a secret, besides the selector.
    var writtenAttributes: AttributeMap {
        var map: AttributeMap = [.accessible: .accessibility(accessibility.wire)]
        if let label { map[.label] = .string(label) }
        if let comment { map[.comment] = .string(comment) }
        return map
    }
}
