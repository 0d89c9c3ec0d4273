/// Secret Service attribute items on the wire (the requests `arca-secretd` sends):
/// an item is a label, a dictionary of UTF-8 attributes, a content type and a
/// secret, stored in the user's vault and named by its persistent reference.
///
/// A dictionary is a u32 count (at most ``ProtocolLimits/maximumSecretAttributeCount``)
/// then, per pair sorted by name, two strings (u32 length + UTF-8, at most
/// ``ProtocolLimits/maximumStringLength`` each). A name appearing twice is an error.
public typealias SecretAttributes = [String: String]

/// Adds an attribute item (`CreateItem`). Replied with ``Reply/attributeItems(_:)``
/// holding the one item.
public struct AttributeItemAdd: Sendable, Hashable {
    /// The vault owner; a user may name only their own uid.
    public var uid: UInt32
    /// The item's label.
    public var label: String
    /// The item's attributes.
    public var attributes: SecretAttributes
    /// The content type of the secret (`text/plain`…).
    public var contentType: String
    /// The secret (may be empty), at most ``ProtocolLimits/maximumSecretLength``.
    public var secret: [UInt8]
    /// The item's class; `nil` lets arcad choose (`secret_service_class` in arca.conf).
    public var accessible: Accessibility?
    /// Replace the item whose attributes equal `attributes` instead of adding a twin.
    public var replace: Bool

    /// An add request from its parts.
    public init(
        uid: UInt32, label: String, attributes: SecretAttributes, contentType: String, secret: [UInt8],
        accessible: Accessibility? = nil, replace: Bool = false
    ) {
        self.uid = uid
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.secret = secret
        self.accessible = accessible
        self.replace = replace
    }
}

/// Changes an attribute item; fields left `nil` keep their value. Replied with
/// ``Reply/attributeItems(_:)`` holding the item as stored.
public struct AttributeItemUpdate: Sendable, Hashable {
    /// The vault owner.
    public var uid: UInt32
    /// The item.
    public var reference: [UInt8]
    /// A new label.
    public var label: String?
    /// New attributes (replacing all of them).
    public var attributes: SecretAttributes?
    /// A new content type.
    public var contentType: String?
    /// A new secret.
    public var secret: [UInt8]?

    /// An update request from its parts.
    public init(
        uid: UInt32, reference: [UInt8], label: String? = nil, attributes: SecretAttributes? = nil,
        contentType: String? = nil, secret: [UInt8]? = nil
    ) {
        self.uid = uid
        self.reference = reference
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.secret = secret
    }
}

/// One attribute item as arcad returns it.
public struct AttributeItemInfo: Sendable, Hashable {
    /// The persistent reference (16 bytes).
    public var reference: [UInt8]
    /// The label.
    public var label: String
    /// The attributes, exactly as stored.
    public var attributes: SecretAttributes
    /// The content type.
    public var contentType: String
    /// Creation time, microseconds since 1970.
    public var created: Int64
    /// Modification time, microseconds since 1970.
    public var modified: Int64
    /// The item's class.
    public var accessible: Accessibility
    /// The secret, when asked for.
    public var secret: [UInt8]?

    /// An item from its parts.
    public init(
        reference: [UInt8], label: String, attributes: SecretAttributes, contentType: String, created: Int64,
        modified: Int64, accessible: Accessibility, secret: [UInt8]? = nil
    ) {
        self.reference = reference
        self.label = label
        self.attributes = attributes
        self.contentType = contentType
        self.created = created
        self.modified = modified
        self.accessible = accessible
        self.secret = secret
    }
}

/// Attribute items found: those readable now, and the references of matches whose
/// class is locked (never left out: locked is not "not found").
public struct AttributeItemList: Sendable, Hashable {
    /// Items of unlocked classes.
    public var items: [AttributeItemInfo]
    /// References of matching items whose class is locked.
    public var locked: [[UInt8]]

    /// A list from its parts.
    public init(items: [AttributeItemInfo], locked: [[UInt8]] = []) {
        self.items = items
        self.locked = locked
    }
}

extension WireWriter {
    mutating func secretAttributes(_ d: SecretAttributes, field: String) throws(ProtocolError) {
        guard d.count <= ProtocolLimits.maximumSecretAttributeCount else {
            throw .fieldTooLong(field: field, length: d.count, limit: ProtocolLimits.maximumSecretAttributeCount)
        }
        u32(UInt32(d.count))
        for name in d.keys.sorted() {
            try string(name, field: field, limit: ProtocolLimits.maximumStringLength)
            try string(d[name] ?? "", field: field, limit: ProtocolLimits.maximumStringLength)
        }
    }

    mutating func reference(_ ref: [UInt8]) throws(ProtocolError) {
        try bytes(ref, field: "reference", limit: ProtocolLimits.maximumPersistentRefLength)
    }

    mutating func attributeItemList(_ list: AttributeItemList) throws(ProtocolError) {
        try self.list(list.items, field: "items", limit: ProtocolLimits.maximumListCount) {
            w, item throws(ProtocolError) in
            try w.reference(item.reference)
            try w.string(item.label, field: "label", limit: ProtocolLimits.maximumStringLength)
            try w.secretAttributes(item.attributes, field: "attributes")
            try w.string(item.contentType, field: "contentType", limit: ProtocolLimits.maximumStringLength)
            w.i64(item.created)
            w.i64(item.modified)
            w.u8(item.accessible.rawValue)
            try w.optional(item.secret) { w, s throws(ProtocolError) in
                try w.bytes(s, field: "secret", limit: ProtocolLimits.maximumSecretLength)
            }
        }
        try self.list(list.locked, field: "locked", limit: ProtocolLimits.maximumListCount) {
            w, ref throws(ProtocolError) in try w.reference(ref)
        }
    }
}

extension WireReader {
    mutating func secretAttributes(field: String) throws(ProtocolError) -> SecretAttributes {
        let count = Int(try u32())
        guard count <= ProtocolLimits.maximumSecretAttributeCount else {
            throw .fieldTooLong(field: field, length: count, limit: ProtocolLimits.maximumSecretAttributeCount)
        }
        var d: SecretAttributes = [:]
        for _ in 0..<count {
            let name = try string(field: field, limit: ProtocolLimits.maximumStringLength)
            let value = try string(field: field, limit: ProtocolLimits.maximumStringLength)
            guard d[name] == nil else { throw .invalidValue(field: field) }
            d[name] = value
        }
        return d
    }

    mutating func reference() throws(ProtocolError) -> [UInt8] {
        try bytes(field: "reference", limit: ProtocolLimits.maximumPersistentRefLength)
    }

    mutating func attributeItemList() throws(ProtocolError) -> AttributeItemList {
        let items = try list(field: "items", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) -> AttributeItemInfo in
            AttributeItemInfo(
                reference: try r.reference(),
                label: try r.string(field: "label", limit: ProtocolLimits.maximumStringLength),
                attributes: try r.secretAttributes(field: "attributes"),
                contentType: try r.string(field: "contentType", limit: ProtocolLimits.maximumStringLength),
                created: try r.i64(), modified: try r.i64(), accessible: try r.accessibility(),
                secret: try r.optional(field: "secret") { r throws(ProtocolError) in
                    try r.bytes(field: "secret", limit: ProtocolLimits.maximumSecretLength)
                })
        }
        let locked = try list(field: "locked", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) in try r.reference()
        }
        return AttributeItemList(items: items, locked: locked)
    }
}

/// The references of attribute items found (``Request/searchAttributeReferences(uid:attributes:)``):
/// the same matches as a search, without their attributes.
public struct AttributeReferenceList: Sendable, Hashable {
    /// References of matching items of unlocked classes.
    public var unlocked: [[UInt8]]
    /// References of matching items whose class is locked.
    public var locked: [[UInt8]]

    /// A list from its parts.
    public init(unlocked: [[UInt8]], locked: [[UInt8]] = []) {
        self.unlocked = unlocked
        self.locked = locked
    }
}

/// The Secret Service's login collection as arcad keeps it (``Request/collectionSettings(uid:label:)``).
public struct CollectionSettings: Sendable, Hashable {
    /// The collection's label.
    public var label: String
    /// The class of new items (`secret_service_class`): the collection is locked when it is.
    public var accessible: Accessibility

    /// Settings from their parts.
    public init(label: String, accessible: Accessibility) {
        self.label = label
        self.accessible = accessible
    }
}

extension WireWriter {
    mutating func attributeReferenceList(_ list: AttributeReferenceList) throws(ProtocolError) {
        try self.list(list.unlocked, field: "unlocked", limit: ProtocolLimits.maximumListCount) {
            w, ref throws(ProtocolError) in try w.reference(ref)
        }
        try self.list(list.locked, field: "locked", limit: ProtocolLimits.maximumListCount) {
            w, ref throws(ProtocolError) in try w.reference(ref)
        }
    }
}

extension WireReader {
    mutating func attributeReferenceList() throws(ProtocolError) -> AttributeReferenceList {
        let unlocked = try list(field: "unlocked", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) in try r.reference()
        }
        let locked = try list(field: "locked", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) in try r.reference()
        }
        return AttributeReferenceList(unlocked: unlocked, locked: locked)
    }
}
