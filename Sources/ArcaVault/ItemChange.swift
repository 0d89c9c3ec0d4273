import ArcaCrypto

/// One item an update, delete, sync merge or restore changed, as arcad needs it to
/// mirror the change in the kernel one key at a time instead of rebuilding whole rings.
public struct ItemChange: Sendable {
    /// The item's class (a change never moves an item to another class).
    public let itemClass: ItemClass
    /// The attributes before the change, `accessible` always set; nil when the change
    /// added the item (a merged winner or a restored item with a free primary key).
    public let old: ItemAttributes?
    /// The attributes after the change, `accessible` always set; nil when deleted.
    public let new: ItemAttributes?
    /// The secret after the change: the new one when the update set it (always, for an
    /// item a merge or restore wrote), else the kept one when the caller asked for it
    /// (`Vault.update(_:changes:secret:readingSecret:)`).
    public let secret: SecretBytes?
    /// Whether the change wrote the secret (a merge or restore always does).
    public let secretChanged: Bool

    public init(
        itemClass: ItemClass, old: ItemAttributes?, new: ItemAttributes?, secret: SecretBytes? = nil,
        secretChanged: Bool = false
    ) {
        self.itemClass = itemClass
        self.old = old
        self.new = new
        self.secret = secret
        self.secretChanged = secretChanged
    }
}

extension ItemChange {
    /// A merged or restored item written over the one with its primary key (`old`, nil
    /// when the key was free), as `add` stored it; its secret always counts as written.
    init(writing item: PortableItem, over old: ItemAttributes?, as added: ItemResult) {
        self.init(
            itemClass: item.itemClass, old: old, new: added.attributes, secret: item.secret, secretChanged: true)
    }
}
