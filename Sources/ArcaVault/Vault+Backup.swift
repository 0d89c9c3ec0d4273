import ArcaCrypto
import ArcaProtocol

/// An item as it leaves the vault for a backup or a sync record: its class, every attribute
/// (dates included) and its secret.
public struct PortableItem: Sendable {
    /// The item's class.
    public var itemClass: ItemClass
    /// Every attribute, `accessible` and `synchronizable` set.
    public var attributes: ItemAttributes
    /// The secret.
    public var secret: SecretBytes

    /// An item from its parts.
    public init(itemClass: ItemClass, attributes: ItemAttributes, secret: SecretBytes) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
    }

    /// class u8 ‖ accessible u8 ‖ synchronizable u8 ‖ the vault's attribute record: what a
    /// record's body carries as attributes.
    public var encodedAttributes: [UInt8] {
        let accessible = attributes.accessible ?? .whenUnlocked
        return [itemClass.rawValue, accessible.rawValue, attributes.synchronizable == true ? 1 : 0]
            + ItemCodec.encode(attributes)
    }

    /// Decodes `encodedAttributes`; throws `VaultError.param` on bytes that are not one.
    public init(encodedAttributes bytes: [UInt8], secret: SecretBytes) throws {
        guard bytes.count > 3, let itemClass = ItemClass(rawValue: bytes[0]),
            let accessible = Accessibility(rawValue: bytes[1]), bytes[2] <= 1,
            var attributes = ItemCodec.decode(Array(bytes[3...]))
        else { throw VaultError.param("not an item record") }
        attributes.accessible = accessible
        attributes.synchronizable = bytes[2] == 1
        self.init(itemClass: itemClass, attributes: attributes, secret: secret)
    }
}

/// What importing one item did.
public enum ImportOutcome: Sendable, Equatable {
    /// No item had its primary key: added.
    case added
    /// The backup's copy was newer (modification date) and different: it replaced the item.
    case replaced
    /// The same item, or a newer one, is already here: nothing changed.
    case unchanged
}

/// Backup and restore: every item that may leave the machine, and putting one back.
extension Vault {
    /// Every item that may leave this machine (not ThisDeviceOnly), both classes, with
    /// attributes and secrets. Both portable classes must be unlocked, else `locked`: a
    /// backup that silently left out the whenUnlocked items would look complete.
    /// `synchronizable: .yes` reads (and decrypts) only the synchronizable ones, as sync needs.
    public func portableItems(synchronizable: SynchronizableMatch = .any) throws -> [PortableItem] {
        guard unlockedClasses.isSuperset(of: [.whenUnlocked, .afterFirstUnlock]) else { throw VaultError.locked }
        var out: [PortableItem] = []
        for itemClass in ItemClass.allCases {
            let query = Query(
                itemClass, synchronizable: synchronizable, matchLimit: .all, returnData: true, returnAttributes: true)
            let results: [ItemResult]
            do { results = try copyMatching(query) } catch VaultError.itemNotFound { continue }
            for r in results {
                guard let a = r.attributes, let secret = r.data, !(a.accessible?.isThisDeviceOnly ?? false) else {
                    continue
                }
                out.append(PortableItem(itemClass: itemClass, attributes: a, secret: secret))
            }
        }
        return out
    }

    /// Puts a backed-up item back: added if its primary key is free, replacing the item here
    /// only if the backup's copy is different and newer. Importing the same backup twice
    /// changes nothing the second time. A ThisDeviceOnly item is refused (`param`).
    public func importItem(_ item: PortableItem) throws -> ImportOutcome {
        try importItemReporting(item).outcome
    }

    /// `importItem`, with the change it made (nil when unchanged), secret included, for
    /// arcad to mirror in the kernel.
    public func importItemReporting(_ item: PortableItem) throws -> (outcome: ImportOutcome, change: ItemChange?) {
        guard !(item.attributes.accessible?.isThisDeviceOnly ?? false) else {
            throw VaultError.param("a backup cannot carry ThisDeviceOnly items")
        }
        let a = item.attributes
        let query = item.primaryKeyQuery
        let existing: ItemResult?
        do { existing = try copyMatching(query).first } catch VaultError.itemNotFound { existing = nil }
        guard let existing, let here = existing.attributes else {
            let added = try add(item.itemClass, attributes: a, secret: item.secret, keepingDates: true)
            return (.added, ItemChange(writing: item, over: nil, as: added))
        }
        if here == a && existing.data == item.secret { return (.unchanged, nil) }
        guard (a.modificationDate ?? 0) > (here.modificationDate ?? 0) else { return (.unchanged, nil) }
        let change = try batch {
            let replaced = try delete(query, markingSync: true).first
            let added = try add(item.itemClass, attributes: a, secret: item.secret, keepingDates: true)
            return ItemChange(writing: item, over: replaced?.old, as: added)
        }
        return (.replaced, change)
    }
}
