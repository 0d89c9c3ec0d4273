import ArcaClient
import ArcaCrypto
import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// arcad's system vault as the fleet uses it, over arcad's socket (root only): the
/// fleet's own keys, and the items a host serves with their grants. Delivery to
/// services (persistent keyrings, LoadCredential=) is arcad's, unchanged.
public struct SystemVault {
    /// The service under which the fleet keeps its own keys in the system vault.
    public static let keyService = "arca-fleet"
    let socket: String

    public init(socket: String) { self.socket = socket }

    func send(_ request: Request, what: String) throws(FleetError) -> Reply {
        let reply: Reply
        do { reply = try ArcadClient(path: socket).send(request) } catch { throw .arcad("\(what): \(error)") }
        if case .error(let status, let message) = reply { throw .arcad("\(what): \(message) (\(status))") }
        return reply
    }

    /// Adds the item, or replaces its secret if it exists.
    public func store(
        service: String, account: String, secret: SecretBytes, accessible: Accessibility? = nil
    ) throws(FleetError) {
        var bytes = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        let key: AttributeMap = [.service: .string(service), .account: .string(account)]
        var attributes = key
        if let accessible { attributes[.accessible] = .accessibility(accessible) }
        var add = Request.add(
            AddRequest(vault: .system, itemClass: .genericPassword, attributes: attributes, secret: bytes))
        defer { add.wipeSecrets() }
        do {
            _ = try send(add, what: "add \(service)")
        } catch {
            guard exists(service: service, account: account) else { throw error }
            var update = Request.update(
                UpdateRequest(
                    vault: .system, query: Query(itemClass: .genericPassword, attributes: key),
                    attributes: [:], secret: bytes))
            defer { update.wipeSecrets() }
            _ = try send(update, what: "update \(service)")
        }
    }

    func exists(service: String, account: String) -> Bool {
        let query = Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string(account)])
        return (try? send(.copyMatching(vault: .system, query: query), what: "find")) != nil
    }

    /// The secret of a system item, or nil if there is none.
    public func fetch(service: String, account: String) throws(FleetError) -> SecretBytes? {
        let query = Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string(account)],
            returnFlags: .data)
        let reply: Reply
        do { reply = try ArcadClient(path: socket).send(.copyMatching(vault: .system, query: query)) } catch {
            throw .arcad("read \(service): \(error)")
        }
        switch reply {
        case .items(let items):
            guard var data = items.first?.data else { return nil }
            defer { SecureWipe.zero(&data) }
            do { return try SecretBytes(consuming: &data) } catch { throw .crypto("\(error)") }
        case .error(.itemNotFound, _): return nil
        case .error(let status, let message): throw .arcad("read \(service): \(message) (\(status))")
        default: throw .arcad("read \(service): unexpected reply")
        }
    }

    /// Replaces the grants of an item with `principals`.
    public func setGrants(service: String, account: String, principals: [Principal]) throws(FleetError) {
        let query = Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string(account)],
            matchLimit: .all)
        _ = try send(.revokeGrant(query: query, principals: []), what: "revoke grants of \(service)")
        if !principals.isEmpty { _ = try send(.grant(query: query, principals: principals), what: "grant \(service)") }
    }

    /// Deletes an item: arcad removes its keys from the kernel at once.
    public func remove(service: String, account: String) throws(FleetError) {
        let query = Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string(account)],
            matchLimit: .all)
        do { _ = try send(.delete(vault: .system, query: query), what: "delete \(service)") } catch {
            if exists(service: service, account: account) { throw error }
        }
    }
}

/// Grants by name → principals by number, in this host's user and group databases.
public enum PrincipalNames {
    /// The principals named; names unknown on this host are returned in `unknown`.
    /// A unit without `:ID` gets `defaultCredential` (the item's service), as `arca add --allow-unit` does.
    public static func resolve(users: [String], groups: [String], units: [String], defaultCredential: String) -> (
        principals: [Principal], unknown: [String]
    ) {
        var principals: [Principal] = []
        var unknown: [String] = []
        for name in users {
            if let entry = getpwnam(name) {
                principals.append(.user(entry.pointee.pw_uid))
            } else {
                unknown.append("user \(name)")
            }
        }
        for name in groups {
            if let entry = getgrnam(name) {
                principals.append(.group(entry.pointee.gr_gid))
            } else {
                unknown.append("group \(name)")
            }
        }
        for spec in units {
            let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
            guard let unit = parts.first else { continue }
            principals.append(.unit(name: unit, credential: parts.count > 1 ? parts[1] : defaultCredential))
        }
        return (principals, unknown)
    }
}
