import ArcaCrypto

/// Secret Service attribute items (`AttributeItem`) over the encrypted rows: each
/// is a generic password in the reserved access group, plus one blind-index row
/// per attribute pair in `attr_tags`. A search intersects the rows of its pairs in
/// SQLite, then confirms every candidate on its decrypted attributes: no scan of
/// the vault, and no false match from a tag collision.
extension Vault {
    /// The most attributes one item may carry, and the longest name or value.
    public static let maximumAttributeCount = 64
    public static let maximumAttributeLength = 16 << 10

    /// Adds an item. With `replace`, the oldest item whose attributes equal
    /// `attributes` exactly gets the new label, content type and secret instead
    /// (and keeps its reference). Returns the item and whether it replaced one.
    /// `accessible` defaults to `afterFirstUnlock`. The class locked → `locked`.
    public func addAttributeItem(
        label: String, attributes: [String: String], contentType: String, secret: SecretBytes,
        accessible: Accessibility?, replace: Bool
    ) throws -> (item: AttributeItem, replaced: Bool) {
        try validate(attributes)
        return try guarded {
            try db.transaction {
                if replace, let existing = try exactMatch(attributes) {
                    let item = try updateAttributeItem(
                        existing, label: label, attributes: nil, contentType: contentType, secret: secret)
                    return (item, true)
                }
                var a = ItemAttributes()
                a.accessGroup = AttributeItem.accessGroup
                a.account = Self.randomAccount()
                a.label = label
                a.secretAttributes = attributes
                a.contentType = contentType
                a.accessible = accessible ?? .afterFirstUnlock
                let added = try add(.genericPassword, attributes: a, secret: secret)
                guard let reference = added.persistentReference, let stored = added.attributes else {
                    throw VaultError.param("the added item has no reference")
                }
                try writeTags(attributes, reference: reference)
                return (AttributeItem(reference: reference.bytes, attributes: stored, secret: nil), false)
            }
        }
    }

    /// Items whose attributes include every pair of `attributes` (exact,
    /// case-sensitive); `[:]` matches every attribute item. With no key held at all
    /// → `locked` (nothing can be searched, and locked is never "not found").
    public func searchAttributeItems(_ attributes: [String: String], returnSecrets: Bool = false) throws
        -> AttributeSearchResult
    {
        try validate(attributes)
        guard let index = blindIndex else { throw VaultError.locked }
        return try guarded {
            let (condition, binds) = try attributeCondition(attributes, index)
            var unlocked: [AttributeItem] = []
            var locked: [PersistentReference] = []
            try forEachAttributeRow(where: condition, binds, withSecret: returnSecrets) { row in
                guard classKeys[row.accessible] != nil else {
                    locked.append(PersistentReference(unchecked: row.ref))
                    return
                }
                let (itemKey, a) = try open(row)
                guard a.accessGroup == AttributeItem.accessGroup, let have = a.secretAttributes,
                    attributes.allSatisfy({ have[$0.key] == $0.value })
                else { return }
                let secret = returnSecrets ? try readSecret(Match(row: row, itemKey: itemKey, attributes: a)) : nil
                unlocked.append(AttributeItem(reference: row.ref, attributes: a, secret: secret))
            }
            return AttributeSearchResult(unlocked: unlocked, locked: locked)
        }
    }

    /// The references of the items `searchAttributeItems` would return, without
    /// building them: a D-Bus search answers with paths only. `[:]` lists every
    /// attribute item from the index alone (the keyed tag of the reserved group: no
    /// decryption); a search by attributes still confirms each candidate on its
    /// decrypted attributes. No key held at all → `locked`.
    public func searchAttributeReferences(_ attributes: [String: String]) throws
        -> (unlocked: [PersistentReference], locked: [PersistentReference])
    {
        try validate(attributes)
        guard let index = blindIndex else { throw VaultError.locked }
        return try guarded {
            var unlocked: [PersistentReference] = []
            var locked: [PersistentReference] = []
            let (condition, binds) = try attributeCondition(attributes, index)
            if attributes.isEmpty {
                let s = try db.statement(
                    "SELECT ref, accessible FROM items WHERE class = ? AND \(condition) ORDER BY id")
                defer { s.finish() }
                try s.bindAt(1, .integer(Int64(ItemClass.genericPassword.rawValue)))
                for (i, value) in binds.enumerated() { try s.bindAt(i + 2, value) }
                while try s.step() {
                    let ref = PersistentReference(unchecked: s.blob(0))
                    let accessible = Accessibility(rawValue: UInt8(truncatingIfNeeded: s.int(1)))
                    if let accessible, classKeys[accessible] != nil { unlocked.append(ref) } else { locked.append(ref) }
                }
                return (unlocked, locked)
            }
            // Confirmed on the record's bytes in place: decoding every candidate's whole
            // record was most of a 1,000-item search.
            let group = Array(AttributeItem.accessGroup.utf8)
            let required = attributes.map { (name: Array($0.key.utf8), value: Array($0.value.utf8)) }
            try forEachAttributeRow(where: condition, binds, withSecret: false) { row in
                guard classKeys[row.accessible] != nil else {
                    locked.append(PersistentReference(unchecked: row.ref))
                    return
                }
                guard ItemCodec.recordMatches(try openRecord(row).1, group: group, required: required) else { return }
                unlocked.append(PersistentReference(unchecked: row.ref))
            }
            return (unlocked, locked)
        }
    }

    /// One item by reference. Unknown (or not an attribute item) → `itemNotFound`;
    /// its class locked → `locked`.
    public func attributeItem(_ reference: PersistentReference, returnSecret: Bool = false) throws -> AttributeItem {
        let results = try copyMatching(Self.byReference(reference, returnSecret: returnSecret))
        guard let found = results.first, let attributes = found.attributes else { throw VaultError.itemNotFound }
        return AttributeItem(reference: reference.bytes, attributes: attributes, secret: found.data)
    }

    /// Changes what is given of one item and sets its modification time; returns
    /// the item as stored. Unknown → `itemNotFound`; locked → `locked`.
    @discardableResult
    public func updateAttributeItem(
        _ reference: PersistentReference, label: String? = nil, attributes: [String: String]? = nil,
        contentType: String? = nil, secret: SecretBytes? = nil
    ) throws -> AttributeItem {
        if let attributes { try validate(attributes) }
        var changes = ItemAttributes()
        changes.label = label
        changes.secretAttributes = attributes
        changes.contentType = contentType
        return try guarded {
            try db.transaction {
                _ = try update(Self.byReference(reference, returnSecret: false), changes: changes, secret: secret)
                if let attributes {
                    try db.statement("DELETE FROM attr_tags WHERE item = (SELECT id FROM items WHERE ref = ?)")
                        .bind(.blob(reference.bytes)).run()
                    try writeTags(attributes, reference: reference)
                }
                return try attributeItem(reference)
            }
        }
    }

    /// Deletes one item. Unknown → `itemNotFound`; locked → `locked`.
    public func deleteAttributeItem(_ reference: PersistentReference) throws {
        _ = try delete(Self.byReference(reference, returnSecret: false))
    }

    // MARK: Internals

    private static func byReference(_ reference: PersistentReference, returnSecret: Bool) -> Query {
        Query(
            .genericPassword, attributes: ItemAttributes { $0.accessGroup = AttributeItem.accessGroup },
            synchronizable: .any, persistentReference: reference, matchLimit: .one, returnData: returnSecret,
            returnAttributes: true)
    }

    /// The oldest unlocked item whose attributes are exactly `attributes`; a locked
    /// candidate → `locked` (replacing must not silently add a twin).
    private func exactMatch(_ attributes: [String: String]) throws -> PersistentReference? {
        let found = try searchAttributeItems(attributes)
        if let item = found.unlocked.first(where: { $0.attributes == attributes }) { return item.reference }
        if !found.locked.isEmpty { throw VaultError.locked }
        return nil
    }

    /// The SQL condition (and its binds, after the class) selecting the candidates of a search.
    private func attributeCondition(_ attributes: [String: String], _ index: BlindIndex) throws
        -> (String, [SQLValue])
    {
        var binds: [SQLValue] = []
        if attributes.isEmpty {
            binds.append(.blob(try crypto { try index.tag(ItemCodec.lookupKey("grp", AttributeItem.accessGroup)) }))
            return ("grp = ?", binds)
        }
        var tags: [[UInt8]] = []
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            tags.append(try crypto { try index.tag(ItemCodec.attributeKey(name, value)) })
        }
        // The rarest pair drives (its rows, a prefix of the primary key) and every other
        // pair is one primary-key probe per driving row: the cost follows the shortest
        // list. An INTERSECT built an ephemeral index of every list first: a lookup of
        // {bench: 1, id: 500} inserted all the rows of bench=1 to keep one.
        if tags.count > 1 {
            var counted: [(tag: [UInt8], rows: Int64)] = []
            for tag in tags { counted.append((tag, try estimatedRows(tag))) }
            tags = counted.enumerated().sorted { ($0.element.rows, $0.offset) < ($1.element.rows, $1.offset) }
                .map(\.element.tag)
        }
        var condition = "id IN (SELECT t0.item FROM attr_tags AS t0"
        for i in tags.indices.dropFirst() { condition += " CROSS JOIN attr_tags AS t\(i)" }
        condition += " WHERE t0.tag = ?"
        for i in tags.indices.dropFirst() { condition += " AND t\(i).tag = ? AND t\(i).item = t0.item" }
        return (condition + ")", binds + tags.map { .blob($0) })
    }

    /// The rows of one tag, counted up to 64: enough to tell a rare pair from a common one.
    private func estimatedRows(_ tag: [UInt8]) throws -> Int64 {
        let s = try db.statement("SELECT count(*) FROM (SELECT 1 FROM attr_tags WHERE tag = ? LIMIT 64)")
        defer { s.finish() }
        try s.bindAt(1, .blob(tag))
        guard try s.step() else { return 0 }
        return s.int(0)
    }

    private func writeTags(_ attributes: [String: String], reference: PersistentReference) throws {
        guard let index = blindIndex else { throw VaultError.locked }
        for (name, value) in attributes {
            let tag = try crypto { try index.tag(ItemCodec.attributeKey(name, value)) }
            try db.statement("INSERT OR IGNORE INTO attr_tags(tag, item) SELECT ?, id FROM items WHERE ref = ?")
                .bind(.blob(tag), .blob(reference.bytes)).run()
        }
    }

    /// Calls `body` with each generic-password row matching `condition`, in insertion order.
    private func forEachAttributeRow(
        where condition: String, _ binds: [SQLValue], withSecret: Bool, _ body: (Row) throws -> Void
    ) throws {
        let sql =
            "SELECT id, ref, accessible, sync, pk, wrapped_key, meta\(withSecret ? ", secret" : "") FROM items "
            + "WHERE class = ? AND \(condition) ORDER BY id"
        let statement = try db.statement(sql)
        var rows: [Row] = []
        do {
            defer { statement.finish() }
            try statement.bindAt(1, .integer(Int64(ItemClass.genericPassword.rawValue)))
            for (i, value) in binds.enumerated() { try statement.bindAt(i + 2, value) }
            while try statement.step() {
                guard let accessible = Accessibility(rawValue: UInt8(truncatingIfNeeded: statement.int(2))) else {
                    throw VaultError.damaged(path: path, reason: "an item has an unknown accessibility class")
                }
                rows.append(
                    Row(
                        id: statement.int(0), ref: statement.blob(1), itemClass: .genericPassword,
                        accessible: accessible, sync: statement.int(3) != 0, pk: statement.blob(4),
                        wrappedKey: statement.blob(5), meta: statement.blob(6),
                        sealedSecret: withSecret ? statement.blob(7) : nil))
            }
        }
        defer { itemKeyScratch?.wipe() }
        for row in rows { try body(row) }
    }

    private func validate(_ attributes: [String: String]) throws {
        guard attributes.count <= Self.maximumAttributeCount else {
            throw VaultError.param("at most \(Self.maximumAttributeCount) attributes per item")
        }
        for (name, value) in attributes {
            guard name.utf8.count <= Self.maximumAttributeLength, value.utf8.count <= Self.maximumAttributeLength
            else { throw VaultError.param("an attribute name or value is longer than 16 KiB") }
        }
    }

    /// 32 lowercase hex digits of 16 random bytes. Built as bytes: the per-byte Character
    /// arrays and Strings it was made of were 2.4 % of arcad's CPU time in a CreateItem stream.
    static func randomAccount() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in SecureRandom.bytes(count: 16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
