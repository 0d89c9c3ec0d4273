import ArcaKeyring
import ArcaProtocol
import ArcaVault

/// The one translation between the wire's attribute maps and the vault's typed
/// model. Both sides follow ARCHITECTURE §4 and share the item-class and
/// accessibility enums; only the attribute representation differs.
enum ItemMapping {
    /// The kernel ring an accessibility class lives in.
    static func kernelClass(_ a: ArcaVault.Accessibility) -> KernelClass {
        switch a {
        case .whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly: .whenUnlocked
        case .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly: .afterFirstUnlock
        }
    }

    /// The vault classes held in one kernel ring.
    static func vaultClasses(_ k: KernelClass) -> Set<ArcaVault.Accessibility> {
        switch k {
        case .whenUnlocked: ArcaVault.Accessibility.whenUnlockedClasses
        case .afterFirstUnlock: [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]
        }
    }

    /// Wire attributes → vault attributes. Dates and the item class are set by the
    /// store, so a client cannot forge them: they are refused on writes.
    static func attributes(_ map: AttributeMap, forWrite: Bool) throws(HandlerError) -> ItemAttributes {
        var a = ItemAttributes()
        for (tag, value) in map {
            switch (tag, value) {
            case (.itemClass, _): continue  // carried separately on the wire
            case (.service, .string(let s)): a.service = try text(s, tag)
            case (.account, .string(let s)): a.account = try text(s, tag)
            case (.label, .string(let s)): a.label = try text(s, tag)
            case (.description, .string(let s)): a.description = try text(s, tag)
            case (.comment, .string(let s)): a.comment = try text(s, tag)
            case (.generic, .bytes(let b)): a.generic = b
            case (.creator, .uint32(let n)): a.creator = n
            case (.type, .uint32(let n)): a.type = n
            case (.isInvisible, .bool(let b)): a.isInvisible = b
            case (.isNegative, .bool(let b)): a.isNegative = b
            case (.creationDate, .date(let us)), (.modificationDate, .date(let us)):
                if forWrite { throw .param("\(tag.fieldName) is set by the store") }
                if tag == .creationDate {
                    a.creationDate = Double(us) / 1e6
                } else {
                    a.modificationDate = Double(us) / 1e6
                }
            case (.server, .string(let s)): a.server = try text(s, tag)
            case (.protocol, .string(let s)): a.protocol = try text(s, tag)
            case (.port, .uint32(let n)): a.port = Int(n)
            case (.path, .string(let s)): a.path = try text(s, tag)
            case (.securityDomain, .string(let s)): a.securityDomain = try text(s, tag)
            case (.authenticationType, .string(let s)): a.authenticationType = try text(s, tag)
            case (.accessGroup, .string(let s)): a.accessGroup = try text(s, tag)
            case (.synchronizable, .bool(let b)): a.synchronizable = b
            case (.accessible, .accessibility(let x)): a.accessible = x
            default: throw .param("attribute \(tag.fieldName) has the wrong type")
            }
        }
        return a
    }

    /// Vault attributes → wire attributes, with the class.
    static func attributeMap(_ a: ItemAttributes, itemClass c: ArcaVault.ItemClass) -> AttributeMap {
        var m: AttributeMap = [.itemClass: .itemClass(c)]
        func put(_ tag: AttributeTag, _ value: AttributeValue?) { if let value { m[tag] = value } }
        put(.service, a.service.map { .string($0) })
        put(.account, a.account.map { .string($0) })
        put(.label, a.label.map { .string($0) })
        put(.description, a.description.map { .string($0) })
        put(.comment, a.comment.map { .string($0) })
        put(.generic, a.generic.map { .bytes($0) })
        put(.creator, a.creator.map { .uint32($0) })
        put(.type, a.type.map { .uint32($0) })
        put(.isInvisible, a.isInvisible.map { .bool($0) })
        put(.isNegative, a.isNegative.map { .bool($0) })
        put(.creationDate, a.creationDate.map { .date(microsecondsSinceEpoch: Int64(($0 * 1e6).rounded())) })
        put(.modificationDate, a.modificationDate.map { .date(microsecondsSinceEpoch: Int64(($0 * 1e6).rounded())) })
        put(.server, a.server.map { .string($0) })
        put(.protocol, a.protocol.map { .string($0) })
        put(.port, a.port.flatMap { UInt32(exactly: $0) }.map { .uint32($0) })
        put(.path, a.path.map { .string($0) })
        put(.securityDomain, a.securityDomain.map { .string($0) })
        put(.authenticationType, a.authenticationType.map { .string($0) })
        put(.accessGroup, a.accessGroup.map { .string($0) })
        put(.synchronizable, a.synchronizable.map { .bool($0) })
        put(.accessible, a.accessible.map { .accessibility($0) })
        return m
    }

    static func query(_ q: ArcaProtocol.Query) throws(HandlerError) -> ArcaVault.Query {
        let attributes = try attributes(q.attributes, forWrite: false)
        let limit: ArcaVault.MatchLimit
        switch q.matchLimit {
        case .one: limit = .one
        case .all: limit = .all
        case .count(let n): limit = .count(Int(n))
        }
        var reference: PersistentReference?
        if let bytes = q.persistentRef {
            do { reference = try PersistentReference(bytes: bytes) } catch {
                throw .param("malformed persistent reference")
            }
        }
        return ArcaVault.Query(
            q.itemClass, attributes: attributes, synchronizable: q.synchronizableAny ? .any : .no,
            persistentReference: reference, matchLimit: limit, returnData: q.returnFlags.contains(.data),
            returnAttributes: q.returnFlags.contains(.attributes),
            returnPersistentReference: q.returnFlags.contains(.persistentRef), caseInsensitive: q.caseInsensitive)
    }

    /// The kernel key of a vault item: its primary key (ARCHITECTURE §4), built by the
    /// same builder the CLI and the library search with.
    static func keyringKey(_ a: ItemAttributes, itemClass c: ArcaVault.ItemClass) -> KeyringItemKey {
        KeyringItemKey(itemClass: c, attributes: attributeMap(a, itemClass: c))
    }

    /// Strings reach SQLite and kernel key descriptions: NUL is refused.
    private static func text(_ s: String, _ tag: AttributeTag) throws(HandlerError) -> String {
        guard !s.utf8.contains(0) else { throw .param("\(tag.fieldName) contains a NUL byte") }
        return s
    }
}
