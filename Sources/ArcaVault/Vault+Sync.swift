import ArcaCrypto

/// Sync (issue 17): the items that travel, and putting a merged winner into the vault.
extension PortableItem {
    /// A query for the item with this item's primary key (ARCHITECTURE §4), returning its
    /// attributes and secret.
    public var primaryKeyQuery: Query {
        var key = ItemAttributes()
        let a = attributes
        key.service = a.service ?? ""
        key.account = a.account ?? ""
        key.accessGroup = a.accessGroup ?? ""
        key.synchronizable = a.synchronizable ?? false
        if itemClass == .internetPassword {
            key.service = nil
            (key.server, key.protocol, key.port) = (a.server ?? "", a.protocol ?? "", a.port)
            (key.path, key.securityDomain) = (a.path ?? "", a.securityDomain ?? "")
            key.authenticationType = a.authenticationType ?? ""
        }
        return Query(itemClass, attributes: key, returnData: true, returnAttributes: true)
    }

    /// The primary key as bytes (class ‖ the key attributes encoded): equal for two items
    /// exactly when the vault would refuse the second as a duplicate.
    public var primaryKey: [UInt8] {
        let query = primaryKeyQuery
        return [itemClass.rawValue] + ItemCodec.encode(query.attributes)
    }

    /// Whether this item may travel between a person's machines: synchronizable, and of a
    /// class that is not ThisDeviceOnly.
    public var isSynchronizable: Bool {
        attributes.synchronizable == true && !(attributes.accessible?.isThisDeviceOnly ?? false)
    }
}

extension Vault {
    /// Every synchronizable item (both portable classes must be unlocked, else `locked`).
    public func synchronizableItems() throws -> [PortableItem] {
        try portableItems(synchronizable: .yes).filter(\.isSynchronizable)
    }

    /// Writes a merged winner: replaces the item with its primary key (or adds it), keeping
    /// the record's dates, so that the vault holds exactly what the record carries.
    /// An item that may not travel is refused (`param`). Returns the change, with the
    /// secret, for arcad to mirror in the kernel.
    @discardableResult
    public func putSynced(_ item: PortableItem) throws -> ItemChange {
        guard item.isSynchronizable else { throw VaultError.param("a sync record may only carry synchronizable items") }
        // Not marked for the outbox: the circle already holds what this writes.
        return try batch {
            let replaced: ItemChange?
            do { replaced = try delete(item.primaryKeyQuery, markingSync: false).first } catch VaultError.itemNotFound {
                replaced = nil
            }
            let added = try add(
                item.itemClass, attributes: item.attributes, secret: item.secret, keepingDates: true, markingSync: false
            )
            // One change, old and new together: when the item keeps its kernel key, one put
            // replaces the secret in place and a reader never finds the item missing.
            return ItemChange(writing: item, over: replaced?.old, as: added)
        }
    }

    /// Deletes the item with `item`'s primary key (a winning tombstone); nothing if absent.
    /// Returns what was deleted.
    @discardableResult
    public func removeSynced(_ item: PortableItem) throws -> [ItemChange] {
        guard item.isSynchronizable else { return [] }
        do { return try delete(item.primaryKeyQuery, markingSync: false) } catch VaultError.itemNotFound { return [] }
    }
}
