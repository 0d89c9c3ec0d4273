import ArcaProtocol

/// org.freedesktop.DBus.Properties on every object. Getters succeed locked or not
/// (a locked item shows an empty label and attributes until unlocked).
extension SecretService {
    func properties(_ member: String, _ object: SecretObject, _ m: BusMessage) throws -> [BusValue] {
        switch member {
        case "Get":
            let interface = try m.readString()
            let name = try m.readString()
            guard let value = try allProperties(object, interface: interface)[name] else {
                throw SecretError.invalidArgs("no property \(interface).\(name) on \(object.path)")
            }
            return [.variant(value)]
        case "GetAll":
            return [.properties(try allProperties(object, interface: try m.readString()))]
        case "Set":
            let interface = try m.readString()
            let name = try m.readString()
            try set(object, interface: interface, name, try m.readVariant())
            return []
        default:
            throw SecretError.unknownMethod("no method \(Interfaces.properties).\(member)")
        }
    }

    private func allProperties(_ object: SecretObject, interface: String) throws -> [String: BusValue] {
        let expected: String
        switch object {
        case .service: expected = Interfaces.service
        case .collection: expected = Interfaces.collection
        case .item: expected = Interfaces.item
        case .session: expected = Interfaces.session
        case .prompt: expected = Interfaces.prompt
        }
        guard interface == expected else {
            throw SecretError.invalidArgs("no interface \(interface) on \(object.path)")
        }
        switch object {
        case .service:
            return ["Collections": .paths([CollectionID.login.path, CollectionID.session.path])]
        case .collection(let c):
            return collectionProperties(c)
        case .item(.session, let id):
            guard let item = memoryItems[id] else { throw SecretError.noSuchObject }
            return itemProperties(
                locked: false, attributes: item.attributes, label: item.label, created: item.created,
                modified: item.modified)
        case .item(.login, let id):
            guard let item = try cachedItem(id) else {
                return itemProperties(locked: true, attributes: [:], label: "", created: 0, modified: 0)
            }
            return itemProperties(
                locked: false, attributes: item.attributes, label: item.label,
                created: UInt64(max(0, item.created / 1_000_000)), modified: UInt64(max(0, item.modified / 1_000_000)))
        case .session, .prompt:
            return [:]
        }
    }

    private func collectionProperties(_ c: CollectionID) -> [String: BusValue] {
        let items: [String]
        switch c {
        case .login:
            // Listing needs the index key; with nothing held the collection shows no items.
            let found = try? search([:], in: [.login])
            items = (found?.0 ?? []) + (found?.1 ?? [])
        case .session: items = (try? search([:], in: [.session]).0) ?? []
        }
        return [
            "Items": .paths(items), "Label": .string(c == .login ? settings.label : "Session"),
            "Locked": .bool(c == .login ? loginLocked : false), "Created": .uint64(started),
            "Modified": .uint64(started),
        ]
    }

    private func itemProperties(
        locked: Bool, attributes: [String: String], label: String, created: UInt64,
        modified: UInt64
    ) -> [String: BusValue] {
        [
            "Locked": .bool(locked), "Attributes": .stringDictionary(attributes), "Label": .string(label),
            "Created": .uint64(created), "Modified": .uint64(modified),
        ]
    }

    private func set(_ object: SecretObject, interface: String, _ name: String, _ value: ReadValue) throws {
        let refused = SecretError.invalidArgs("property \(interface).\(name) is not writable with that type")
        switch object {
        case .collection(.login):
            guard interface == Interfaces.collection, name == "Label", case .string(let label) = value else {
                throw refused
            }
            settings = try arcad.collectionSettings(label: label)
        case .item(let c, let id):
            guard interface == Interfaces.item else { throw refused }
            var label: String?
            var attributes: [String: String]?
            switch value {
            case .string(let s) where name == "Label": label = s
            case .stringDictionary(let d) where name == "Attributes": attributes = d
            default: throw refused
            }
            switch c {
            case .session:
                if let label { memoryItems[id]?.label = label }
                if let attributes { memoryItems[id]?.attributes = attributes }
                bus.emit(CollectionID.session.path, Interfaces.collection, "ItemChanged", [.objectPath(object.path)])
            case .login:
                guard let ref = ReferenceText.decode(id) else { throw SecretError.noSuchObject }
                cache[id] = nil
                _ = try arcad.send(
                    .updateAttributeItem(
                        AttributeItemUpdate(uid: arcad.uid, reference: ref, label: label, attributes: attributes)))
            }
        default:
            throw refused
        }
    }
}
