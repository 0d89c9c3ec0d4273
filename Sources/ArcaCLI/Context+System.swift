import ArcaCrypto
import ArcaKeyring
import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The system-vault verbs: add/get/delete --system, grant, revoke, grants.
extension Context {
    mutating func systemAdd(
        _ item: ItemSelection, grants: [Principal], replaceExisting: Bool, output: inout Output
    ) throws(CLIError) {
        let secret = try readSecret(.standardInput, prompt: "secret: ", output: &output)
        var bytes = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        var request = Request.add(
            AddRequest(vault: .system, itemClass: .genericPassword, attributes: item.allAttributes, secret: bytes))
        defer { request.wipeSecrets() }
        do {
            _ = try send(request, what: "add")
        } catch CLIError.status(.duplicateItem, _, _) where replaceExisting {
            var update = Request.update(
                UpdateRequest(
                    vault: .system, query: Query(itemClass: .genericPassword, attributes: item.keyAttributes),
                    attributes: item.otherAttributes, secret: bytes))
            defer { update.wipeSecrets() }
            _ = try send(update, what: "add")
        }
        guard !grants.isEmpty else { return }
        let query = Query(itemClass: .genericPassword, attributes: item.keyAttributes, matchLimit: .all)
        _ = try send(.grant(query: query, principals: grants), what: "add")
    }

    mutating func systemGet(_ item: ItemSelection, useKernel: Bool, json: Bool, output: inout Output) throws(CLIError) {
        // arcad placed the caller's granted items in its persistent keyring (ring arca:svc).
        if useKernel,
            let secret = KeyringReader().readItem(named: item.allAttributes, itemClass: .genericPassword, granted: true)
        {
            emit(secret: secret, json: json, output: &output)
            return
        }
        let query = Query(itemClass: .genericPassword, attributes: item.allAttributes, returnFlags: .data)
        emit(secret: try fetchSecret(from: .system, query), json: json, output: &output)
    }

    mutating func systemDelete(_ item: ItemSelection) throws(CLIError) {
        let query = Query(itemClass: .genericPassword, attributes: item.allAttributes, matchLimit: .all)
        _ = try send(.delete(vault: .system, query: query), what: "delete")
    }

    mutating func grant(_ item: ItemSelection, principals: [Principal], revoke: Bool) throws(CLIError) {
        let query = Query(itemClass: .genericPassword, attributes: item.allAttributes, matchLimit: .all)
        let request: Request =
            revoke ? .revokeGrant(query: query, principals: principals) : .grant(query: query, principals: principals)
        _ = try send(request, what: revoke ? "revoke" : "grant")
    }

    mutating func grants(json: Bool, output: inout Output) throws(CLIError) {
        guard case .grants(let entries) = try send(.listGrants, what: "grants") else { return }
        if json {
            var writer = JSONWriter()
            writer.beginArray()
            for entry in entries { Self.json(entry, into: &writer) }
            writer.endArray()
            writer.flush(into: &output)
            return
        }
        for (index, entry) in entries.enumerated() {
            if index > 0 { output.line("") }
            if let service = entry.service { output.line("service: \(service)") }
            if let account = entry.account { output.line("account: \(account)") }
            if let label = entry.label { output.line("label: \(label)") }
            for principal in entry.principals { output.line(Self.describe(principal)) }
        }
    }

    /// `user: postgres (999)`, `group: dba (120)`, `unit: postgresql.service (credential db-password)`.
    static func describe(_ principal: Principal) -> String {
        switch principal {
        case .user(let uid): "user: \(userName(uid).map { "\($0) (\(uid))" } ?? "\(uid)")"
        case .group(let gid): "group: \(groupName(gid).map { "\($0) (\(gid))" } ?? "\(gid)")"
        case .unit(let name, let credential): "unit: \(name) (credential \(credential))"
        }
    }

    static func json(_ entry: GrantEntry, into writer: inout JSONWriter) {
        writer.beginObject()
        for (key, value) in [("service", entry.service), ("account", entry.account), ("label", entry.label)] {
            guard let value else { continue }
            writer.key(key)
            writer.string(value)
        }
        writer.key("users")
        writer.beginArray()
        for case .user(let uid) in entry.principals { writer.number(uid) }
        writer.endArray()
        writer.key("groups")
        writer.beginArray()
        for case .group(let gid) in entry.principals { writer.number(gid) }
        writer.endArray()
        writer.key("units")
        writer.beginArray()
        for case .unit(let name, let credential) in entry.principals {
            writer.beginObject()
            writer.key("unit")
            writer.string(name)
            writer.key("credential")
            writer.string(credential)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }

    static func userName(_ uid: UInt32) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    static func groupName(_ gid: UInt32) -> String? {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return nil }
        return String(cString: name)
    }
}
