import ArcaCrypto

/// One item an update or delete changed, as arcad needs it to mirror the change in
/// the kernel one key at a time instead of rebuilding whole rings.
public struct ItemChange: Sendable {
    /// The item's class (an update or delete never changes it).
    public let itemClass: ItemClass
    /// The attributes before the change, `accessible` always set.
    public let old: ItemAttributes
    /// The attributes after the change, `accessible` always set; nil when deleted.
    public let new: ItemAttributes?
    /// The secret after the change: the new one when the update set it, else the kept
    /// one when the caller asked for it (`Vault.update(_:changes:secret:readingSecret:)`).
    public let secret: SecretBytes?
    /// Whether the update replaced the secret.
    public let secretChanged: Bool

    public init(
        itemClass: ItemClass, old: ItemAttributes, new: ItemAttributes?, secret: SecretBytes? = nil,
        secretChanged: Bool = false
    ) {
        self.itemClass = itemClass
        self.old = old
        self.new = new
        self.secret = secret
        self.secretChanged = secretChanged
    }
}
