import ArcaCrypto

/// One row of `items`, as read. The sealed secret is read only when the query returns data.
struct Row {
    let id: Int64
    let ref: [UInt8]
    let itemClass: ItemClass
    let accessible: Accessibility
    let sync: Bool
    let pk: [UInt8]
    let wrappedKey: [UInt8]
    let meta: [UInt8]
    /// The sealed secret, if it was selected.
    let sealedSecret: [UInt8]?
}

/// A row that was decrypted and matched a query.
struct Match {
    let row: Row
    /// Borrowed: the vault's scratch key, valid only during the `forEachMatch` callback.
    /// Keep it longer with `copy()`.
    let itemKey: SecretBytes
    let attributes: ItemAttributes
}

/// The encrypted and indexed columns of a row about to be written.
struct SealedRow {
    let pk: [UInt8]
    /// svc, acct, srv, grp.
    let tags: [[UInt8]]
    let wrappedKey: [UInt8]
    let meta: [UInt8]
    /// nil: keep the stored secret (update without new data).
    let secret: [UInt8]?
}

extension Vault {
    /// Computes the blind indexes and seals the wrapped key, metadata and (if given) secret of one item.
    func seal(
        _ itemClass: ItemClass, _ a: ItemAttributes, ref: [UInt8], index: BlindIndex, classKey: SecretBytes,
        itemKey: SecretBytes, secret: SecretBytes?
    ) throws -> SealedRow {
        let accessible = a.accessible ?? .whenUnlocked
        let sync = a.synchronizable ?? false
        let pk = try index.tag(ItemCodec.primaryKey(itemClass, a, synchronizable: sync))
        let tags = try [
            index.tag(ItemCodec.lookupKey("svc", a.service)), index.tag(ItemCodec.lookupKey("acct", a.account)),
            index.tag(ItemCodec.lookupKey("srv", a.server)), index.tag(ItemCodec.lookupKey("grp", a.accessGroup)),
        ]
        func ad(_ blob: ItemCodec.Blob) -> [UInt8] {
            ItemCodec.associatedData(
                blob, vaultID: vaultID, reference: ref, itemClass: itemClass,
                accessible: accessible, synchronizable: sync, primaryKeyTag: pk)
        }
        let wrapped = try KeyWrap.wrap(itemKey, with: classKey, context: ad(.key))
        let meta = try AEAD.seal(ItemCodec.encode(a), key: itemKey, associatedData: ad(.meta)).combined
        let sealedSecret = try secret.map { try AEAD.seal($0, key: itemKey, associatedData: ad(.secret)).combined }
        return SealedRow(pk: pk, tags: tags, wrappedKey: wrapped, meta: meta, secret: sealedSecret)
    }

    /// Calls `body` with each decrypted row matching `query`, up to `limit`, in
    /// insertion order. Returns true if a candidate row was skipped because its class
    /// is locked. Rows that fail to authenticate → `damaged`, never skipped.
    func forEachMatch(_ query: Query, limit: Int, _ body: (Match) throws -> Void) throws -> Bool {
        var conditions = ["class = ?"]
        var binds: [SQLValue] = [.integer(Int64(query.itemClass.rawValue))]
        switch query.effectiveSynchronizable {
        case .no: conditions.append("sync = 0")
        case .yes: conditions.append("sync = 1")
        case .any: break
        }
        let a = query.attributes
        if let accessible = a.accessible {
            conditions.append("accessible = ?")
            binds.append(.integer(Int64(accessible.rawValue)))
        }
        if let ref = query.persistentReference {
            conditions.append("ref = ?")
            binds.append(.blob(ref.bytes))
        }
        // Without any class key there is no index key: the candidates are every row
        // of the class, and they are all locked.
        if let index = blindIndex {
            if let pk = try primaryKeyLookup(query, index: index) {
                conditions.append("pk = ?")
                binds.append(.blob(pk))
            } else {
                for (column, name, value) in [
                    ("svc", "svc", a.service), ("acct", "acct", a.account),
                    ("srv", "srv", a.server), ("grp", "grp", a.accessGroup),
                ] {
                    guard let value else { continue }
                    conditions.append("\(column) = ?")
                    binds.append(.blob(try crypto { try index.tag(ItemCodec.lookupKey(name, value)) }))
                }
            }
        }
        let sql =
            "SELECT id, ref, accessible, sync, pk, wrapped_key, meta\(query.returnData ? ", secret" : "") FROM items WHERE "
            + conditions.joined(separator: " AND ") + " ORDER BY id"
        // Collect the rows first: `body` may run other statements on the connection.
        let statement = try db.statement(sql)
        defer {
            statement.finish()
            itemKeyScratch?.wipe()
        }
        for (i, value) in binds.enumerated() { try statement.bindAt(i + 1, value) }
        var rows: [Row] = []
        var lockedSeen = false
        var matched = 0
        while try statement.step() {
            guard let accessible = Accessibility(rawValue: UInt8(truncatingIfNeeded: statement.int(2))) else {
                throw VaultError.damaged(path: path, reason: "an item has an unknown accessibility class")
            }
            guard classKeys[accessible] != nil else {
                lockedSeen = true
                continue
            }
            rows.append(
                Row(
                    id: statement.int(0), ref: statement.blob(1), itemClass: query.itemClass, accessible: accessible,
                    sync: statement.int(3) != 0, pk: statement.blob(4), wrappedKey: statement.blob(5),
                    meta: statement.blob(6), sealedSecret: query.returnData ? statement.blob(7) : nil))
            // Decrypt in batches so that a limit-one query over many candidates stops early.
            if rows.count >= 64 {
                matched += try decryptAndMatch(rows, query: query, limit: limit - matched, body)
                rows.removeAll(keepingCapacity: true)
                if matched >= limit { return lockedSeen }
            }
        }
        if matched < limit { _ = try decryptAndMatch(rows, query: query, limit: limit - matched, body) }
        return lockedSeen
    }

    private func decryptAndMatch(_ rows: [Row], query: Query, limit: Int, _ body: (Match) throws -> Void) throws -> Int
    {
        var count = 0
        for row in rows where count < limit {
            let (itemKey, attributes) = try open(row)
            guard attributes.matches(query.attributes, caseInsensitive: query.caseInsensitive) else { continue }
            try body(Match(row: row, itemKey: itemKey, attributes: attributes))
            count += 1
        }
        return count
    }

    /// The primary-key tag to look up, when the query names a whole primary key exactly.
    private func primaryKeyLookup(_ q: Query, index: BlindIndex) throws -> [UInt8]? {
        let a = q.attributes
        guard !q.caseInsensitive, q.effectiveSynchronizable != .any, a.account != nil, a.accessGroup != nil else {
            return nil
        }
        switch q.itemClass {
        case .genericPassword: guard a.service != nil else { return nil }
        case .internetPassword:
            guard a.server != nil, a.protocol != nil, a.port != nil, a.path != nil, a.securityDomain != nil,
                a.authenticationType != nil
            else { return nil }
        }
        let key = ItemCodec.primaryKey(q.itemClass, a, synchronizable: q.effectiveSynchronizable == .yes)
        return try crypto { try index.tag(key) }
    }

    private func associatedData(_ blob: ItemCodec.Blob, _ row: Row) -> [UInt8] {
        ItemCodec.associatedData(
            blob, vaultID: vaultID, reference: row.ref, itemClass: row.itemClass,
            accessible: row.accessible, synchronizable: row.sync, primaryKeyTag: row.pk)
    }

    /// Unwraps the item key and decrypts the attributes of an unlocked row.
    func open(_ row: Row) throws -> (SecretBytes, ItemAttributes) {
        let (itemKey, meta) = try openRecord(row)
        guard var attributes = ItemCodec.decode(meta) else {
            throw VaultError.damaged(path: path, reason: "an item's attribute record does not parse")
        }
        attributes.accessible = row.accessible
        attributes.synchronizable = row.sync
        return (itemKey, attributes)
    }

    /// Unwraps the item key (into the vault's scratch key) and decrypts the
    /// attribute record of an unlocked row, undecoded.
    func openRecord(_ row: Row) throws -> (SecretBytes, [UInt8]) {
        guard let classKey = classKeys[row.accessible] else { throw VaultError.locked }
        // One guarded allocation per vault, not per row: sodium_malloc and sodium_free
        // (mmap, mprotect, mlock and back) were most of the cost of a scan.
        let itemKey = try itemKeyScratch ?? crypto { try SecretBytes(count: 32) }
        itemKeyScratch = itemKey
        do {
            try KeyWrap.unwrap(row.wrappedKey, with: classKey, context: associatedData(.key, row), into: itemKey)
            let meta = try AEAD.openBytes(
                SealedBox(combined: row.meta), key: itemKey, associatedData: associatedData(.meta, row))
            return (itemKey, meta)
        } catch is CryptoError {
            throw damagedItem()
        }
    }

    /// Reads and decrypts the secret of a matched row.
    func readSecret(_ m: Match) throws -> SecretBytes {
        let blob: [UInt8]
        if let selected = m.row.sealedSecret {
            blob = selected
        } else {
            let s = try db.statement("SELECT secret FROM items WHERE id = ?").bind(.integer(m.row.id))
            defer { s.finish() }
            guard try s.step() else { throw VaultError.itemNotFound }
            blob = s.blob(0)
        }
        do {
            return try AEAD.open(
                SealedBox(combined: blob), key: m.itemKey, associatedData: associatedData(.secret, m.row))
        } catch is CryptoError {
            throw damagedItem()
        }
    }

    private func damagedItem() -> VaultError {
        .damaged(
            path: path, reason: "an item failed to authenticate (altered, moved to another row or class, or replayed)")
    }
}
