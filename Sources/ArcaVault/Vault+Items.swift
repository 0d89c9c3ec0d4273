import ArcaCrypto

/// SecItemAdd / CopyMatching / Update / Delete over the encrypted rows.
extension Vault {
    /// Adds an item (`SecItemAdd`). Dates are set by the store; `accessible`
    /// defaults to `whenUnlocked` and `synchronizable` to false. Returns the stored
    /// attributes and persistent reference. Errors, in the order they are checked:
    /// bad attribute or secret over 1 MiB → `param`; the item's class locked →
    /// `locked`; same primary key → `duplicateItem`.
    @discardableResult
    public func add(_ itemClass: ItemClass, attributes: ItemAttributes, secret: SecretBytes) throws -> ItemResult {
        try add(itemClass, attributes: attributes, secret: secret, keepingDates: false)
    }

    /// `add`, keeping the creation and modification dates of `attributes` when
    /// `keepingDates` (a restore from a backup) instead of setting them to now.
    /// `markingSync: false` for the circle's own writes (`putSynced`), which need no record.
    @discardableResult
    func add(
        _ itemClass: ItemClass, attributes: ItemAttributes, secret: SecretBytes, keepingDates: Bool,
        markingSync: Bool = true
    ) throws -> ItemResult {
        var checked = attributes
        if keepingDates { (checked.creationDate, checked.modificationDate) = (nil, nil) }
        try validate(checked, for: itemClass, secret: secret)
        var a = attributes
        let accessible = a.accessible ?? .whenUnlocked
        let sync = a.synchronizable ?? false
        try Self.checkSynchronizable(sync, accessible)
        guard let classKey = classKeys[accessible], let index = blindIndex else { throw VaultError.locked }
        let now = FileProbe.now()
        a.accessible = accessible
        a.synchronizable = sync
        a.creationDate = keepingDates ? attributes.creationDate ?? now : now
        a.modificationDate = keepingDates ? attributes.modificationDate ?? now : now
        let ref = SecureRandom.bytes(count: PersistentReference.length)
        let sealed = try crypto { () -> SealedRow in
            let itemKey = try SecretBytes.random(count: 32)
            return try seal(itemClass, a, ref: ref, index: index, classKey: classKey, itemKey: itemKey, secret: secret)
        }
        try guarded {
            guard sync && markingSync else {
                return try insert(itemClass, ref: ref, accessible: accessible, sync: sync, sealed: sealed)
            }
            try db.transaction {
                try insert(itemClass, ref: ref, accessible: accessible, sync: sync, sealed: sealed)
                try markSyncChanged(sealed.pk)
            }
        }
        return ItemResult(
            itemClass: itemClass, attributes: a, data: nil, persistentReference: PersistentReference(unchecked: ref))
    }

    private func insert(_ itemClass: ItemClass, ref: [UInt8], accessible: Accessibility, sync: Bool, sealed: SealedRow)
        throws
    {
        do {
            try db.statement(
                """
                INSERT INTO items(ref, class, accessible, sync, pk, svc, acct, srv, grp, wrapped_key, meta, secret)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
            ).bind(
                .blob(ref), .integer(Int64(itemClass.rawValue)), .integer(Int64(accessible.rawValue)),
                .integer(sync ? 1 : 0), .blob(sealed.pk), .blob(sealed.tags[0]), .blob(sealed.tags[1]),
                .blob(sealed.tags[2]), .blob(sealed.tags[3]), .blob(sealed.wrappedKey), .blob(sealed.meta),
                .blob(sealed.secret ?? [])
            ).run()
        } catch let e as SQLiteError where e.isConstraint {
            throw VaultError.duplicateItem
        }
    }

    /// Finds items (`SecItemCopyMatching`). Items of locked classes are skipped; if
    /// nothing unlocked matched and a locked item might have, the result is
    /// `locked`, never `itemNotFound`.
    public func copyMatching(_ query: Query) throws -> [ItemResult] {
        try validateQuery(query)
        var results: [ItemResult] = []
        let locked = try guarded {
            try forEachMatch(query, limit: query.matchLimit.maximum) { m in
                let data = query.returnData ? try readSecret(m) : nil
                results.append(
                    ItemResult(
                        itemClass: query.itemClass, attributes: query.returnAttributes ? m.attributes : nil, data: data,
                        persistentReference: query.returnPersistentReference
                            ? PersistentReference(unchecked: m.row.ref) : nil))
            }
        }
        guard !results.isEmpty else { throw locked ? VaultError.locked : VaultError.itemNotFound }
        return results
    }

    /// Updates every match (`SecItemUpdate`, the match limit is ignored): each set
    /// field of `changes` replaces the item's, `secret` replaces the data, and the
    /// modification date is set. All or nothing: a collision of primary keys →
    /// `duplicateItem` and no item changes. Returns how many items changed.
    @discardableResult
    public func update(_ query: Query, changes: ItemAttributes, secret: SecretBytes? = nil) throws -> Int {
        try update(query, changes: changes, secret: secret, readingSecret: { _, _ in false }).count
    }

    /// `update`, reporting each changed item (for arcad, which mirrors the change in
    /// the kernel one key at a time). When `secret` is nil, an item's current secret
    /// is read in the same transaction if `readingSecret(old, new)` says the caller
    /// needs it (the item moves to another key description or ring).
    public func update(
        _ query: Query, changes: ItemAttributes, secret: SecretBytes?,
        readingSecret: (_ old: ItemAttributes, _ new: ItemAttributes) -> Bool
    ) throws -> [ItemChange] {
        try validateQuery(query)
        try validate(changes, for: query.itemClass, secret: secret)
        if let sync = changes.synchronizable, let target = changes.accessible {
            try Self.checkSynchronizable(sync, target)
        }
        if let target = changes.accessible, classKeys[target] == nil { throw VaultError.locked }
        guard let index = blindIndex else { throw try noMatchError(query) }
        return try guarded {
            try db.transaction {
                var matches: [Match] = []
                let locked = try forEachMatch(query, limit: Int.max) { m in
                    let key = try crypto { try m.itemKey.copy() }  // the match's key is only borrowed
                    matches.append(Match(row: m.row, itemKey: key, attributes: m.attributes))
                }
                guard !matches.isEmpty else { throw locked ? VaultError.locked : VaultError.itemNotFound }
                let now = FileProbe.now()
                var changed: [ItemChange] = []
                for m in matches {
                    var old = m.attributes
                    old.accessible = old.accessible ?? m.row.accessible
                    var a = m.attributes
                    a.apply(changes)
                    a.modificationDate = now
                    let accessible = a.accessible ?? m.row.accessible
                    a.accessible = accessible
                    try Self.checkSynchronizable(a.synchronizable ?? false, accessible)
                    guard let classKey = classKeys[accessible] else { throw VaultError.locked }
                    let kept = secret == nil && readingSecret(old, a) ? try readSecret(m) : nil
                    changed.append(
                        ItemChange(
                            itemClass: query.itemClass, old: old, new: a, secret: secret ?? kept,
                            secretChanged: secret != nil))
                    let sealed = try crypto {
                        try seal(
                            query.itemClass, a, ref: m.row.ref, index: index, classKey: classKey, itemKey: m.itemKey,
                            secret: secret)
                    }
                    do {
                        try db.statement(
                            """
                            UPDATE items SET accessible = ?, sync = ?, pk = ?, svc = ?, acct = ?, srv = ?, grp = ?,
                                wrapped_key = ?, meta = ?, secret = coalesce(?, secret) WHERE id = ?
                            """
                        ).bind(
                            .integer(Int64(accessible.rawValue)), .integer(a.synchronizable == true ? 1 : 0),
                            .blob(sealed.pk),
                            .blob(sealed.tags[0]), .blob(sealed.tags[1]), .blob(sealed.tags[2]), .blob(sealed.tags[3]),
                            .blob(sealed.wrappedKey), .blob(sealed.meta), sealed.secret.map { .blob($0) } ?? .null,
                            .integer(m.row.id)
                        ).run()
                    } catch let e as SQLiteError where e.isConstraint {
                        throw VaultError.duplicateItem
                    }
                    // Both tags: a renamed item is a delete of the old key and an add of the new.
                    if m.row.sync { try markSyncChanged(m.row.pk) }
                    if a.synchronizable == true { try markSyncChanged(sealed.pk) }
                }
                return changed
            }
        }
    }

    /// Deletes every match (`SecItemDelete`, the match limit is ignored). Locked
    /// items are not deleted. Returns how many were.
    @discardableResult
    public func delete(_ query: Query) throws -> Int {
        try delete(query, markingSync: true).count
    }

    /// `delete`, reporting each deleted item with its attributes (`new` is nil).
    public func deleteReporting(_ query: Query) throws -> [ItemChange] {
        try delete(query, markingSync: true)
    }

    /// `markingSync: false` for the circle's own deletes (`removeSynced`, `putSynced`).
    func delete(_ query: Query, markingSync: Bool) throws -> [ItemChange] {
        try validateQuery(query)
        guard blindIndex != nil else { throw try noMatchError(query) }
        return try guarded {
            try db.transaction {
                var rows: [(row: Row, change: ItemChange)] = []
                let locked = try forEachMatch(query, limit: Int.max) { m in
                    var old = m.attributes
                    old.accessible = old.accessible ?? m.row.accessible
                    rows.append((m.row, ItemChange(itemClass: query.itemClass, old: old, new: nil)))
                }
                guard !rows.isEmpty else { throw locked ? VaultError.locked : VaultError.itemNotFound }
                for (row, _) in rows {
                    try db.statement("DELETE FROM items WHERE id = ?").bind(.integer(row.id)).run()
                    try db.statement("DELETE FROM attr_tags WHERE item = ?").bind(.integer(row.id)).run()
                    if row.sync && markingSync { try markSyncChanged(row.pk) }
                }
                return rows.map(\.change)
            }
        }
    }

    /// Runs `body` (adds, updates, deletes) as one transaction: all of it is stored
    /// with one sync, or none of it if `body` throws. For imports and bulk changes.
    public func batch<R>(_ body: () throws -> R) throws -> R {
        try guarded { try db.transaction(body) }
    }

    /// The number of items in the vault, locked or not (no key needed).
    public func itemCount() throws -> Int {
        try guarded {
            let s = try db.statement("SELECT count(*) FROM items")
            defer { s.finish() }
            return try s.step() ? Int(s.int(0)) : 0
        }
    }

    // MARK: Validation

    private func validate(_ a: ItemAttributes, for itemClass: ItemClass, secret: SecretBytes?) throws {
        if let secret, secret.count > Self.maximumSecretLength {
            throw VaultError.param(
                "the secret is \(secret.count) bytes; the limit is 1 MiB (\(Self.maximumSecretLength) bytes)")
        }
        if a.creationDate != nil || a.modificationDate != nil {
            throw VaultError.param("creation and modification dates are set by the store")
        }
        try validateFields(a, for: itemClass)
    }

    /// A synchronizable item leaves the machine; a ThisDeviceOnly one never does.
    /// Apple's SecItemAdd/SecItemUpdate refuse the pair with errSecParam; so does
    /// the vault, whichever of the two a change sets.
    private static func checkSynchronizable(_ synchronizable: Bool, _ accessible: Accessibility) throws {
        guard synchronizable && accessible.isThisDeviceOnly else { return }
        throw VaultError.param("a synchronizable item cannot have a ThisDeviceOnly accessibility")
    }

    private func validateQuery(_ q: Query) throws {
        try validateFields(q.attributes, for: q.itemClass)
        if case .count(let n) = q.matchLimit, n < 1 { throw VaultError.param("a match limit must be at least 1") }
    }

    private func validateFields(_ a: ItemAttributes, for itemClass: ItemClass) throws {
        let wrong = itemClass == .genericPassword ? a.internetOnlyFieldsSet : a.genericOnlyFieldsSet
        if let first = wrong.first {
            let name = itemClass == .genericPassword ? "generic" : "internet"
            throw VaultError.param("\(first) is not an attribute of \(name) passwords")
        }
    }

    /// With no class key at all: locked if any row of the class could match, else not found.
    private func noMatchError(_ q: Query) throws -> VaultError {
        try guarded { try forEachMatch(q, limit: 1) { _ in } } ? .locked : .itemNotFound
    }
}
