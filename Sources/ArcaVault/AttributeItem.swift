import ArcaCrypto

/// An item of the freedesktop Secret Service (`arca-secretd`): a label, a
/// dictionary of UTF-8 attributes that applications search by, a content type and
/// a secret. Stored as a generic password in the reserved access group
/// ``accessGroup`` with a random account, so that the Keychain primary key stays
/// unique however many items share the same attributes; the dictionary is sealed
/// in the item's metadata and searched through its own exact blind index.
public struct AttributeItem: Sendable {
    /// The reserved access group of attribute items.
    public static let accessGroup = "org.freedesktop.secrets"

    /// The item's stable reference (its D-Bus object path is made from it).
    public let reference: PersistentReference
    /// The label (`org.freedesktop.Secret.Item.Label`).
    public let label: String
    /// The attributes, exactly as stored (`xdg:schema` included).
    public let attributes: [String: String]
    /// The content type of the secret.
    public let contentType: String
    /// Creation time, seconds since 1970.
    public let created: Double
    /// Last modification time, seconds since 1970.
    public let modified: Double
    /// The item's class.
    public let accessible: Accessibility
    /// The secret, when asked for.
    public let secret: SecretBytes?

    init(reference: [UInt8], attributes a: ItemAttributes, secret: SecretBytes?) {
        self.reference = PersistentReference(unchecked: reference)
        label = a.label ?? ""
        attributes = a.secretAttributes ?? [:]
        contentType = a.contentType ?? ""
        created = a.creationDate ?? 0
        modified = a.modificationDate ?? 0
        accessible = a.accessible ?? .whenUnlocked
        self.secret = secret
    }
}

/// The answer to a search of attribute items: those whose class is unlocked, and
/// the references of those that matched the index but whose class is locked (the
/// Secret Service's `locked` list: locked never reads as not found).
public struct AttributeSearchResult: Sendable {
    /// Matching items, confirmed on their decrypted attributes.
    public let unlocked: [AttributeItem]
    /// Items whose every attribute tag matched, in a locked class.
    public let locked: [PersistentReference]
}
