import ArcaProtocol
import FoundationEssentials

/// The attributes of one item (never its secret), as `allItems()` and
/// `attributes(for:)` return them.
public struct KeychainItem: Sendable, Hashable {
    /// `kSecAttrAccount`: the key the item is stored under.
    public var key: String?
    /// `kSecAttrService` (generic passwords).
    public var service: String?
    /// `kSecAttrServer` (internet passwords).
    public var server: String?
    /// `kSecAttrProtocol`, Apple's four-character code.
    public var protocolType: String?
    /// `kSecAttrAuthenticationType`, Apple's four-character code.
    public var authenticationType: String?
    /// `kSecAttrPort`.
    public var port: Int?
    /// `kSecAttrPath`.
    public var path: String?
    /// `kSecAttrAccessGroup`.
    public var accessGroup: String?
    /// `kSecAttrAccessible`.
    public var accessibility: Accessibility?
    /// `kSecAttrSynchronizable`.
    public var synchronizable: Bool
    /// `kSecAttrLabel`.
    public var label: String?
    /// `kSecAttrComment`.
    public var comment: String?
    /// `kSecAttrCreationDate`, set by the store.
    public var creationDate: Date?
    /// `kSecAttrModificationDate`, set by the store.
    public var modificationDate: Date?
    /// A stable opaque reference to the item (`kSecValuePersistentRef`), when asked for.
    public var persistentRef: Data?

    /// The item described by wire attributes.
    package init(_ attributes: AttributeMap, persistentRef: [UInt8]? = nil) {
        func string(_ tag: AttributeTag) -> String? {
            if case .string(let s)? = attributes[tag] { return s }
            return nil
        }
        func date(_ tag: AttributeTag) -> Date? {
            if case .date(let us)? = attributes[tag] { return Date(timeIntervalSince1970: Double(us) / 1e6) }
            return nil
        }
        key = string(.account)
        service = string(.service)
        server = string(.server)
        protocolType = string(.protocol)
        authenticationType = string(.authenticationType)
        if case .uint32(let p)? = attributes[.port] { port = Int(p) }
        path = string(.path)
        accessGroup = string(.accessGroup)
        if case .accessibility(let a)? = attributes[.accessible] { accessibility = Accessibility(a) }
        if case .bool(let b)? = attributes[.synchronizable] { synchronizable = b } else { synchronizable = false }
        label = string(.label)
        comment = string(.comment)
        creationDate = date(.creationDate)
        modificationDate = date(.modificationDate)
        self.persistentRef = persistentRef.map { Data($0) }
    }
}

/// Listing items, their attributes and persistent references.
extension Keychain {
    /// The keys (accounts) of every item of this keychain, sorted.
    public func allKeys() throws(KeychainError) -> [String] {
        try allItems().compactMap(\.key).sorted()
    }

    /// The attributes of every item of this keychain (no secrets).
    public func allItems() throws(KeychainError) -> [KeychainItem] {
        do {
            return try store.copyMatching(query(key: nil, limit: .all, returning: .attributes)).map {
                KeychainItem($0.attributes)
            }
        } catch  where error.code == .itemNotFound {
            return []
        }
    }

    /// The attributes of the item under `key`, with its persistent reference;
    /// `nil` when there is no such item.
    public func attributes(for key: String) throws(KeychainError) -> KeychainItem? {
        do {
            let items = try store.copyMatching(query(key: key, returning: [.attributes, .persistentRef]))
            return items.first.map { KeychainItem($0.attributes, persistentRef: $0.persistentRef) }
        } catch  where error.code == .itemNotFound {
            return nil
        }
    }

    /// The persistent reference of the item under `key` (stable across renames
    /// and restarts); `nil` when there is no such item.
    public func persistentRef(for key: String) throws(KeychainError) -> Data? {
        do {
            return try store.copyMatching(query(key: key, returning: .persistentRef)).first?.persistentRef.map {
                Data($0)
            }
        } catch  where error.code == .itemNotFound {
            return nil
        }
    }

    /// The secret of the item a persistent reference names; `nil` when it no longer exists.
    public func getData(persistentRef: Data) throws(KeychainError) -> Data? {
        let query = Query(itemClass: wireClass, persistentRef: [UInt8](persistentRef), returnFlags: .data)
        do {
            return try store.copyMatching(query).first?.data.map { Data($0) }
        } catch  where error.code == .itemNotFound {
            return nil
        }
    }
}
