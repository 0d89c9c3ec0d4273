import ArcaProtocol

/// The one place that turns item attributes into a kernel key. arcad publishes
/// under the key this builds from a stored item, and the CLI and the library
/// search for the key it builds from a lookup: were the two written apart, a
/// drift between them would silently send every read to the socket.
extension KeyringItemKey {
    /// The primary-key attributes of each class (ARCHITECTURE §4).
    public static func primaryKeyTags(of itemClass: ItemClass) -> Set<AttributeTag> {
        switch itemClass {
        case .genericPassword: [.service, .account, .accessGroup, .synchronizable]
        case .internetPassword:
            [
                .server, .account, .protocol, .port, .path, .securityDomain, .authenticationType, .accessGroup,
                .synchronizable,
            ]
        }
    }

    /// The kernel key of an item with `attributes`: its primary-key attributes, an
    /// absent one taken as its empty default (as the vault stores it); every other
    /// attribute is ignored. arcad's vault checks each attribute's type on write, so a
    /// stored item never has a primary-key attribute of the wrong type; here one
    /// counts as absent (``named(by:itemClass:)`` refuses it instead).
    public init(itemClass: ItemClass, attributes: AttributeMap) {
        func string(_ tag: AttributeTag) -> String {
            if case .string(let value)? = attributes[tag] { return value }
            return ""
        }
        var synchronizable = false
        if case .bool(let value)? = attributes[.synchronizable] { synchronizable = value }
        switch itemClass {
        case .genericPassword:
            self = .genericPassword(
                GenericPasswordKey(
                    service: string(.service), account: string(.account), accessGroup: string(.accessGroup),
                    synchronizable: synchronizable))
        case .internetPassword:
            var port = 0
            if case .uint32(let value)? = attributes[.port] { port = Int(value) }
            self = .internetPassword(
                InternetPasswordKey(
                    server: string(.server), account: string(.account), protocol: string(.protocol), port: port,
                    path: string(.path), securityDomain: string(.securityDomain),
                    authenticationType: string(.authenticationType), accessGroup: string(.accessGroup),
                    synchronizable: synchronizable))
        }
    }

    /// The kernel key a lookup names exactly, or nil when only arcad can answer it:
    /// every attribute of `lookup` must be a primary-key attribute of its own type
    /// (the kernel knows nothing else, so a label or class to match goes to arcad),
    /// and the service (server) and the account must be given. Absent optional parts
    /// are their empty default, which the item then has.
    public static func named(by lookup: AttributeMap, itemClass: ItemClass) -> KeyringItemKey? {
        let nameTag: AttributeTag = itemClass == .genericPassword ? .service : .server
        let tags = primaryKeyTags(of: itemClass)
        guard lookup[nameTag] != nil, lookup[.account] != nil,
            lookup.allSatisfy({ tag, value in tags.contains(tag) && value.type == tag.valueType })
        else { return nil }
        return KeyringItemKey(itemClass: itemClass, attributes: lookup)
    }
}
