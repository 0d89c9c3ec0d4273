/// The byte layouts of an item: its encrypted attribute record, the canonical
/// forms hashed into blind indexes, and the associated data that binds each blob
/// to its vault, item and class. Changing any of these is a schema migration.
enum ItemCodec {
    // Field numbers of the attribute record (type-length-value, little endian).
    enum Field: UInt8 {
        case service = 1, account, label, description, comment, generic, creator, type, isInvisible, isNegative
        case creationDate, modificationDate, server, `protocol`, port, path, securityDomain, authenticationType
        case accessGroup
        // Secret Service attribute items (AttributeItem); older readers skip them.
        case secretAttributes, contentType
    }

    /// Encodes every attribute except `accessible` and `synchronizable`, which live
    /// in authenticated columns of the row.
    static func encode(_ a: ItemAttributes) -> [UInt8] {
        var out: [UInt8] = [1]  // record version
        func put(_ field: Field, _ value: [UInt8]) {
            out.append(field.rawValue)
            appendUInt32(&out, UInt32(value.count))
            out += value
        }
        func put(_ field: Field, _ value: String?) { if let value { put(field, Array(value.utf8)) } }
        func put(_ field: Field, _ value: UInt64?) { if let value { put(field, littleEndian(value)) } }
        put(.service, a.service)
        put(.account, a.account)
        put(.label, a.label)
        put(.description, a.description)
        put(.comment, a.comment)
        if let g = a.generic { put(.generic, g) }
        put(.creator, a.creator.map { UInt64($0) })
        put(.type, a.type.map { UInt64($0) })
        put(.isInvisible, a.isInvisible.map { $0 ? 1 : 0 })
        put(.isNegative, a.isNegative.map { $0 ? 1 : 0 })
        put(.creationDate, a.creationDate.map { $0.bitPattern })
        put(.modificationDate, a.modificationDate.map { $0.bitPattern })
        put(.server, a.server)
        put(.protocol, a.protocol)
        put(.port, a.port.map { UInt64(bitPattern: Int64($0)) })
        put(.path, a.path)
        put(.securityDomain, a.securityDomain)
        put(.authenticationType, a.authenticationType)
        put(.accessGroup, a.accessGroup)
        if let attributes = a.secretAttributes { put(.secretAttributes, encodeDictionary(attributes)) }
        put(.contentType, a.contentType)
        return out
    }

    /// Decodes a record made by `encode`; nil if it does not parse (it was
    /// authenticated, so that means a bug or a future format, never an attacker).
    static func decode(_ bytes: [UInt8]) -> ItemAttributes? {
        var a = ItemAttributes()
        var parsed = true
        let complete = forEachField(bytes) { tag, range in
            let value = Array(bytes[range])
            let string = String(decoding: value, as: UTF8.self)
            let number = value.count == 8 ? readUInt64(value) : nil
            switch Field(rawValue: tag) {
            case .service: a.service = string
            case .account: a.account = string
            case .label: a.label = string
            case .description: a.description = string
            case .comment: a.comment = string
            case .generic: a.generic = value
            case .creator: a.creator = number.map { UInt32(truncatingIfNeeded: $0) }
            case .type: a.type = number.map { UInt32(truncatingIfNeeded: $0) }
            case .isInvisible: a.isInvisible = number.map { $0 != 0 }
            case .isNegative: a.isNegative = number.map { $0 != 0 }
            case .creationDate: a.creationDate = number.map { Double(bitPattern: $0) }
            case .modificationDate: a.modificationDate = number.map { Double(bitPattern: $0) }
            case .server: a.server = string
            case .protocol: a.protocol = string
            case .port: a.port = number.map { Int(Int64(bitPattern: $0)) }
            case .path: a.path = string
            case .securityDomain: a.securityDomain = string
            case .authenticationType: a.authenticationType = string
            case .accessGroup: a.accessGroup = string
            case .secretAttributes:
                guard let dictionary = decodeDictionary(value) else {
                    parsed = false
                    return
                }
                a.secretAttributes = dictionary
            case .contentType: a.contentType = string
            case .none: return  // a newer writer's field: ignored, not fatal
            }
        }
        return complete && parsed ? a : nil
    }

    /// Calls `body` with the tag and value range of each field of a record (format
    /// 1: a version byte, then tag, u32 length, value). False if the record does not parse.
    static func forEachField(_ bytes: [UInt8], _ body: (UInt8, Range<Int>) -> Void) -> Bool {
        guard bytes.first == 1 else { return false }
        var i = 1
        while i < bytes.count {
            guard i + 5 <= bytes.count else { return false }
            let tag = bytes[i]
            let length = Int(readUInt32(bytes, at: i + 1))
            i += 5
            guard length <= bytes.count - i else { return false }
            body(tag, i..<(i + length))
            i += length
        }
        return true
    }

    /// The canonical primary key of ARCHITECTURE §4, hashed into the `pk` column.
    /// An absent string counts as empty and an absent port as 0, so that "no
    /// account" and "empty account" are the same key, as in Apple's store.
    static func primaryKey(_ itemClass: ItemClass, _ a: ItemAttributes, synchronizable: Bool) -> [UInt8] {
        var out: [UInt8] = Array("arca.pk.v1".utf8) + [itemClass.rawValue, synchronizable ? 1 : 0]
        func put(_ s: String?) { field(&out, Array((s ?? "").utf8)) }
        switch itemClass {
        case .genericPassword:
            put(a.service)
            put(a.account)
            put(a.accessGroup)
        case .internetPassword:
            put(a.server)
            put(a.account)
            put(a.protocol)
            field(&out, littleEndian(UInt64(bitPattern: Int64(a.port ?? 0))))
            put(a.path)
            put(a.securityDomain)
            put(a.authenticationType)
            put(a.accessGroup)
        }
        return out
    }

    /// The canonical input of a per-attribute lookup tag: case-folded, so one tag
    /// serves both exact and case-insensitive queries (the exact comparison
    /// happens after decryption).
    static func lookupKey(_ name: String, _ value: String?) -> [UInt8] {
        Array("arca.tag.v1/\(name)\u{0}".utf8) + Array((value ?? "").lowercased().utf8)
    }

    /// A dictionary as (u32 length, UTF-8 name, u32 length, UTF-8 value) pairs sorted
    /// by name, so that equal dictionaries seal equal records.
    static func encodeDictionary(_ d: [String: String]) -> [UInt8] {
        var out: [UInt8] = []
        for name in d.keys.sorted() {
            field(&out, Array(name.utf8))
            field(&out, Array((d[name] ?? "").utf8))
        }
        return out
    }

    static func decodeDictionary(_ bytes: [UInt8]) -> [String: String]? {
        var d: [String: String] = [:]
        var i = 0
        func next() -> String? {
            guard i + 4 <= bytes.count else { return nil }
            let length = Int(readUInt32(bytes, at: i))
            i += 4
            guard length <= bytes.count - i else { return nil }
            defer { i += length }
            return String(decoding: bytes[i..<(i + length)], as: UTF8.self)
        }
        while i < bytes.count {
            guard let name = next(), let value = next() else { return nil }
            d[name] = value
        }
        return d
    }

    /// The canonical input of one Secret Service attribute tag: exact bytes, no case
    /// folding or normalisation (the Secret Service matches exactly). Length-prefixed,
    /// so that no two (name, value) pairs share an input.
    static func attributeKey(_ name: String, _ value: String) -> [UInt8] {
        var out = Array("arca.attr.v1".utf8)
        field(&out, Array(name.utf8))
        field(&out, Array(value.utf8))
        return out
    }

    /// Which blob associated data is for.
    enum Blob: String {
        case key, meta, secret
    }

    /// Associated data of one blob of one item: the vault, the item's reference
    /// and class, and for the wrapped key also its accessibility and
    /// synchronizable flag, for the metadata also the primary-key tag.
    static func associatedData(
        _ blob: Blob, vaultID: [UInt8], reference: [UInt8], itemClass: ItemClass,
        accessible: Accessibility, synchronizable: Bool, primaryKeyTag: [UInt8]
    ) -> [UInt8] {
        var out = Array("arca.item.v1/\(blob.rawValue)".utf8)
        field(&out, vaultID)
        field(&out, reference)
        out.append(itemClass.rawValue)
        switch blob {
        case .key: out += [accessible.rawValue, synchronizable ? 1 : 0]
        case .meta: field(&out, primaryKeyTag)
        case .secret: break
        }
        return out
    }

    private static func field(_ out: inout [UInt8], _ bytes: [UInt8]) {
        appendUInt32(&out, UInt32(bytes.count))
        out += bytes
    }

    static func appendUInt32(_ out: inout [UInt8], _ v: UInt32) {
        out += [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)]
    }

    static func littleEndian(_ v: UInt64) -> [UInt8] {
        (0..<8).map { UInt8((v >> (8 * UInt64($0))) & 0xff) }
    }

    static func readUInt32(_ b: [UInt8], at i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    static func readUInt64(_ b: [UInt8]) -> UInt64 {
        b.prefix(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }
}
