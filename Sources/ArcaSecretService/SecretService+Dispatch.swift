import ArcaCrypto
import ArcaProtocol

/// Routing of method calls: one switch per object kind; every failure becomes the
/// D-Bus error the spec names (`SecretError.name`).
extension SecretService {
    func handle(_ message: BusMessage) {
        guard message.isMethodCall else { return }
        let path = message.path ?? ""
        let interface = message.interface ?? ""
        let member = message.member ?? ""
        // Queued CreateItem calls go out before anything else is answered: only
        // CreateItem calls that arrive together share a trip to arcad.
        if !pendingCreates.isEmpty, member != "CreateItem" { flushCreates() }
        if !pendingSecretReads.isEmpty, !Self.onlyReads(interface, member) { flushSecretReads() }
        do {
            guard let object = SecretObject(path: path), try exists(object, caller: message.sender ?? "") else {
                throw SecretError.unknownObject("no object at \(path)")
            }
            let reply: [BusValue]?
            switch interface {
            case Interfaces.introspectable where member == "Introspect":
                reply = [.string(Introspection.xml(for: object))]
            case Interfaces.peer where member == "Ping":
                reply = []
            case Interfaces.properties:
                reply = try properties(member, object, message)
            default:
                reply = try call(object, interface, member, message)
            }
            // nil: answered later (a login CreateItem by `flushCreates`, GetSecret by `flushSecretReads`).
            if let reply { bus.reply(to: message, reply) }
        } catch let e as SecretError {
            log("\(interface).\(member) on \(path): \(e.name)")
            bus.replyError(to: message, name: e.name, message: e.message)
        } catch let e as BusError {
            bus.replyError(to: message, name: "org.freedesktop.DBus.Error.InvalidArgs", message: "\(e)")
        } catch {
            bus.replyError(to: message, name: "org.freedesktop.DBus.Error.Failed", message: "internal error")
        }
    }

    /// Whether an object exists now (deleted items and closed sessions do not).
    func exists(_ object: SecretObject, caller: String) throws -> Bool {
        switch object {
        case .service, .collection: return true
        case .session(let id): return sessions[id] != nil
        case .prompt(let id): return prompts[id] != nil || flows.values.contains { $0.prompt == id }
        case .item(.session, let id): return memoryItems[id] != nil
        case .item(.login, let id):
            if cache[id] != nil { return true }
            // Fetches the whole last search at once when `id` is part of it.
            if uncachedFound.contains(id), try cachedItem(id) != nil { return true }
            guard let ref = ReferenceText.decode(id) else { return false }
            let list = try arcad.items(.getAttributeItems(uid: arcad.uid, references: [ref], returnSecrets: false))
            return !list.items.isEmpty || !list.locked.isEmpty
        }
    }

    // Nested switches (object, then member), not one switch over a tuple of enums and
    // strings: the optimizer spends minutes on the latter.
    private func call(_ object: SecretObject, _ interface: String, _ member: String, _ m: BusMessage) throws
        -> [BusValue]?
    {
        let caller = m.sender ?? ""
        switch object {
        case .service where interface == Interfaces.service: return try serviceCall(member, m, caller: caller)
        case .collection(let c) where interface == Interfaces.collection:
            switch member {
            case "Delete": throw SecretError.notSupported("the \(c.rawValue) collection cannot be deleted")
            case "SearchItems":
                let (unlockedPaths, lockedPaths) = try search(try m.readStringDictionary(), in: [c])
                return [.paths(unlockedPaths + lockedPaths)]
            case "CreateItem":
                let properties = try m.readProperties()
                let secret = try readSecret(m, caller: caller)
                let replace = try m.readBool()
                guard c == .session else {
                    queueCreate(m, properties, secret, replace: replace)
                    return nil
                }
                return [.objectPath(createSessionItem(properties, secret, replace: replace)), .objectPath("/")]
            default: break
            }
        case .item(let c, let id) where interface == Interfaces.item:
            switch member {
            case "Delete":
                try deleteItem(c, id)
                return [.objectPath("/")]
            case "GetSecret":
                let session = try m.readString("o")
                guard c == .session else {
                    try queueSecretRead(m, id: id, session: session, caller: caller)
                    return nil
                }
                return [try sessionSecret(id, session: session, caller: caller)]
            case "SetSecret":
                try setSecret(c, id, try readSecret(m, caller: caller))
                return []
            default: break
            }
        case .session(let id) where interface == Interfaces.session && member == "Close":
            sessions[id] = nil
            return []
        case .prompt(let id) where interface == Interfaces.prompt:
            switch member {
            case "Prompt":
                try runPrompt(id, window: try m.readString(), caller: caller)
                return []
            case "Dismiss":
                try dismissPrompt(id, caller: caller)
                return []
            default: break
            }
        default: break
        }
        throw SecretError.unknownMethod("no method \(interface).\(member) on \(object.path)")
    }

    private func serviceCall(_ member: String, _ m: BusMessage, caller: String) throws -> [BusValue] {
        switch member {
        case "OpenSession":
            return try openSession(algorithm: try m.readString(), input: try m.readVariant(), caller: caller)
        case "CreateCollection":
            _ = try m.readProperties()
            let alias = try m.readString()
            guard alias == "default" || alias == "login" else {
                throw SecretError.notSupported(
                    "arca-secretd serves one collection per user (login, alias default) and an in-memory session one")
            }
            return [.objectPath(CollectionID.login.path), .objectPath("/")]
        case "SearchItems":
            let (unlockedPaths, lockedPaths) = try search(try m.readStringDictionary(), in: [.login, .session])
            return [.paths(unlockedPaths), .paths(lockedPaths)]
        case "Unlock": return try unlock(try m.readPaths(), caller: caller)
        case "Lock": return try lock(try m.readPaths())
        case "GetSecrets":
            let items = try m.readPaths()
            return [try getSecrets(items, session: try m.readString("o"), caller: caller)]
        case "ReadAlias":
            let name = try m.readString()
            return [.objectPath(name == "default" || name == "login" ? CollectionID.login.path : "/")]
        case "SetAlias":
            let name = try m.readString()
            let target = try m.readString("o")
            guard name == "default" || name == "login", SecretObject(path: target) == .collection(.login) else {
                throw SecretError.notSupported("the aliases default and login always name the login collection")
            }
            return []
        default:
            throw SecretError.unknownMethod("no method \(Interfaces.service).\(member)")
        }
    }
}
