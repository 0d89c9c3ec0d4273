import ArcaCrypto

/// What the vault holds under one primary-key tag, for the sync outbox.
public enum SyncedRow {
    /// A synchronizable item, decrypted.
    case item(PortableItem)
    /// A row whose class is locked: it cannot be read now (it stays pending).
    case locked
    /// No synchronizable row has this tag: the item was deleted or renamed.
    case absent
}

/// The sync outbox's to-do list (issue 17): `sync_pending` holds the primary-key tag of every
/// synchronizable row that an add, update or delete touched, written in the same transaction
/// as the change, so no change is lost to a crash or to a lock before arcad sealed it. arcad
/// seals a record for each pending tag and then clears it: the work after a request is
/// the rows it changed, not the whole vault. The empty tag means "compare every item once"
/// (a vault that predates the table, or sync not set up).
extension Vault {
    /// The pending tag that asks for a comparison of every synchronizable item.
    public static let compareEverything: [UInt8] = []

    /// Notes that the synchronizable row with primary-key tag `tag` changed (in the caller's
    /// transaction).
    func markSyncChanged(_ tag: [UInt8]) throws {
        try db.statement("INSERT OR IGNORE INTO sync_pending(pk) VALUES (?)").bind(.blob(tag)).run()
    }

    /// The pending tags, `compareEverything` included if present.
    public func pendingSyncChanges() throws -> [[UInt8]] {
        try guarded {
            let s = try db.statement("SELECT pk FROM sync_pending")
            defer { s.finish() }
            var tags: [[UInt8]] = []
            while try s.step() { tags.append(s.blob(0)) }
            return tags
        }
    }

    /// Clears `tags` once their records are sealed.
    public func clearPendingSyncChanges(_ tags: [[UInt8]]) throws {
        guard !tags.isEmpty else { return }
        try guarded {
            try db.transaction {
                for tag in tags { try db.statement("DELETE FROM sync_pending WHERE pk = ?").bind(.blob(tag)).run() }
            }
        }
    }

    /// With sync not set up for this vault: `compareEverything` is kept (the first sync
    /// compares every item), which makes the other tags redundant; they are cleared once more
    /// than `limit` gathered, so the table stays bounded without a write after every request.
    public func resetPendingSyncChanges(limit: Int = 1024) throws {
        try guarded {
            let s = try db.statement("SELECT count(*), count(CASE WHEN pk = ? THEN 1 END) FROM sync_pending")
            defer { s.finish() }
            try s.bindAt(1, .blob(Self.compareEverything))
            guard try s.step() else { return }
            let (count, marked) = (s.int(0), s.int(1))
            s.finish()
            guard marked == 0 || count > Int64(limit) else { return }
            try db.transaction {
                try db.execute("DELETE FROM sync_pending")
                try markSyncChanged(Self.compareEverything)
            }
        }
    }

    /// The primary-key tag of `item` in this vault (as `sync_pending` holds it). Locked → `locked`.
    public func primaryKeyTag(of item: PortableItem) throws -> [UInt8] {
        guard let index = blindIndex else { throw VaultError.locked }
        let key = ItemCodec.primaryKey(item.itemClass, item.attributes, synchronizable: true)
        return try crypto { try index.tag(key) }
    }

    /// The synchronizable item whose primary-key tag is `tag`: one row read and decrypted.
    public func synchronizedRow(tag: [UInt8]) throws -> SyncedRow {
        try guarded {
            let s = try db.statement(
                "SELECT id, ref, class, accessible, wrapped_key, meta, secret FROM items WHERE pk = ? AND sync = 1")
            defer {
                s.finish()
                itemKeyScratch?.wipe()
            }
            try s.bindAt(1, .blob(tag))
            guard try s.step() else { return .absent }
            guard let itemClass = ItemClass(rawValue: UInt8(truncatingIfNeeded: s.int(2))),
                let accessible = Accessibility(rawValue: UInt8(truncatingIfNeeded: s.int(3)))
            else { throw VaultError.damaged(path: path, reason: "an item has an unknown class or accessibility") }
            guard classKeys[accessible] != nil else { return .locked }
            let row = Row(
                id: s.int(0), ref: s.blob(1), itemClass: itemClass, accessible: accessible, sync: true, pk: tag,
                wrappedKey: s.blob(4), meta: s.blob(5), sealedSecret: s.blob(6))
            let (itemKey, attributes) = try open(row)
            let secret = try readSecret(Match(row: row, itemKey: itemKey, attributes: attributes))
            guard !accessible.isThisDeviceOnly else { return .absent }
            return .item(PortableItem(itemClass: itemClass, attributes: attributes, secret: secret))
        }
    }
}
