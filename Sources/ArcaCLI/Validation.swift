import ArcaProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Turns a ``ParsedCommand`` into a ``Command``, checking every value first.
public enum Validation {
    /// The `--accessible` names, in the order of the man page.
    public static let accessibilityNames: [(String, Accessibility)] = [
        ("when-unlocked", .whenUnlocked),
        ("after-first-unlock", .afterFirstUnlock),
        ("when-unlocked-this-device-only", .whenUnlockedThisDeviceOnly),
        ("after-first-unlock-this-device-only", .afterFirstUnlockThisDeviceOnly),
        ("when-passcode-set-this-device-only", .whenPasscodeSetThisDeviceOnly),
    ]

    /// The command `parsed` asks for, or why it cannot run.
    public static func validate(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let verb = parsed.verb
        if parsed.wantsHelp { return .help(verb: verb == "help" ? (parsed.positionals.first ?? verb) : verb) }
        let json = parsed.wantsJSON
        switch verb {
        case "help":
            if let name = parsed.positionals.first, CommandTable.verb(named: name) == nil {
                throw UsageError("unknown verb '\(name)'", verb: verb)
            }
            return .help(verb: parsed.positionals.first)
        case "version": return .version(json: json)
        case "init": return .initVault(showRecoveryKey: !parsed.has("no-recovery-key"))
        case "add":
            let item = try selection(parsed, requireName: true)
            if parsed.has("system") {
                return .systemAdd(
                    try systemItem(item, verb: verb), grants: try principals(parsed, item: item),
                    replaceExisting: parsed.has("update"))
            }
            if let name = ["allow-user", "allow-group", "allow-unit"].first(where: parsed.has) {
                throw UsageError("option --\(name) needs --system", verb: verb)
            }
            return .add(item, secret: .standardInput, replaceExisting: parsed.has("update"), compatibility: false)
        case "get":
            let item = try selection(parsed, requireName: true)
            if parsed.has("system") {
                return .systemGet(try systemItem(item, verb: verb), useKernel: !parsed.has("no-kernel"), json: json)
            }
            return .get(item, useKernel: !parsed.has("no-kernel"), json: json)
        case "find":
            return .find(try selection(parsed, requireName: false), showSecrets: parsed.has("show-secret"), json: json)
        case "update":
            let item = try selection(parsed, requireName: true)
            if parsed.has("keep-secret"), item.otherAttributes.isEmpty {
                throw UsageError("'update --keep-secret' needs an attribute to change", verb: verb)
            }
            return .update(item, secret: parsed.has("keep-secret") ? nil : .standardInput)
        case "delete":
            let item = try selection(parsed, requireName: true)
            if parsed.has("system") { return .systemDelete(try systemItem(item, verb: verb)) }
            return .delete(item, compatibility: false)
        case "grant", "revoke":
            let item = try systemItem(try selection(parsed, requireName: true), verb: verb)
            let principals = try principals(parsed, item: item)
            if verb == "grant", principals.isEmpty {
                throw UsageError("'grant' needs --allow-user, --allow-group or --allow-unit", verb: verb)
            }
            return .grant(item, principals: principals, revoke: verb == "revoke")
        case "grants": return .grants(json: json)
        case "list": return .find(nil, showSecrets: parsed.has("show-secret"), json: json)
        case "clear": return .clear
        case "lock": return .lock(all: parsed.has("all"))
        case "unlock": return .unlock(.standardInput)
        case "status":
            guard let name = parsed.value("user") else { return .status(json: json, user: nil) }
            return .status(json: json, user: try userID(name, verb: verb))
        case "passwd":
            if parsed.has("resync"), parsed.has("recover") {
                throw UsageError("--resync and --recover exclude each other", verb: verb)
            }
            return .passwd(resync: parsed.has("resync"), recover: parsed.has("recover"))
        case "recovery": return .recovery(rotate: parsed.has("rotate"), json: json)
        case "show": return .show(json: json)
        case "export":
            guard let path = parsed.value("to"), !path.isEmpty else {
                throw UsageError("'export' needs --to FILE", verb: verb)
            }
            return .exportBackup(path: path, passphrase: parsed.has("passphrase"))
        case "import":
            guard let path = parsed.value("from"), !path.isEmpty else {
                throw UsageError("'import' needs --from FILE", verb: verb)
            }
            return .importBackup(path: path)
        case "lock-keychain": return .lock(all: parsed.has("a"))
        case "unlock-keychain":
            if let password = parsed.value("p") { return .unlock(.commandLine(password)) }
            return .unlock(.standardInput)
        default:
            return try validateCompatibility(parsed)
        }
    }

    static func validateCompatibility(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let verb = parsed.verb
        let internet = verb.hasSuffix("internet-password")
        var item = ItemSelection(
            itemClass: internet ? .internetPassword : .genericPassword, keyAttributes: [:], otherAttributes: [:])
        func set(_ letter: String, _ tag: AttributeTag, key: Bool) {
            guard let value = parsed.value(letter) else { return }
            if key { item.keyAttributes[tag] = .string(value) } else { item.otherAttributes[tag] = .string(value) }
        }
        set("a", .account, key: true)
        set("s", internet ? .server : .service, key: true)
        set("r", .protocol, key: true)
        set("p", .path, key: true)
        set("d", .securityDomain, key: true)
        set("t", .authenticationType, key: true)
        set("l", .label, key: false)
        set("j", .comment, key: false)
        set("D", .description, key: false)
        if let port = parsed.value("P") { item.keyAttributes[.port] = .uint32(try portNumber(port, verb: verb)) }
        switch verb {
        case "add-generic-password", "add-internet-password":
            let secret: SecretSource = parsed.value("w").map { .commandLine($0) } ?? .standardInput
            return .add(item, secret: secret, replaceExisting: parsed.has("U"), compatibility: true)
        case "find-generic-password", "find-internet-password":
            return .compatibilityFind(item, passwordOnly: parsed.has("w"), passwordOnStderr: parsed.has("g"))
        default:
            return .delete(item, compatibility: true)
        }
    }

    /// System items are generic passwords: their service and account name them.
    static func systemItem(_ item: ItemSelection, verb: String) throws(UsageError) -> ItemSelection {
        guard item.itemClass == .genericPassword else {
            throw UsageError("system items are generic passwords; --internet does not apply", verb: verb)
        }
        return item
    }

    /// The `--allow-user/--allow-group/--allow-unit` lists, resolved to ids.
    static func principals(_ parsed: ParsedCommand, item: ItemSelection) throws(UsageError) -> [Principal] {
        let verb = parsed.verb
        func list(_ name: String) -> [String] {
            (parsed.value(name) ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        }
        var result: [Principal] = []
        for name in list("allow-user") { result.append(.user(try userID(name, verb: verb))) }
        for name in list("allow-group") { result.append(.group(try groupID(name, verb: verb))) }
        for spec in list("allow-unit") {
            let parts = spec.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            var credential = parts.count == 2 ? parts[1] : ""
            if parts.count == 1, case .string(let service)? = item.keyAttributes[.service] { credential = service }
            guard !parts[0].isEmpty, !credential.isEmpty, !spec.contains("/") else {
                throw UsageError("invalid unit '\(spec)': expected UNIT[:ID] without '/'", verb: verb)
            }
            result.append(.unit(name: parts[0], credential: credential))
        }
        return result
    }

    /// A gid, given as a number or a group name.
    static func groupID(_ text: String, verb: String) throws(UsageError) -> UInt32 {
        if let gid = UInt32(text) { return gid }
        guard let entry = getgrnam(text) else { throw UsageError("no such group '\(text)'", verb: verb) }
        return entry.pointee.gr_gid
    }

    /// A uid, given as a number or a user name.
    static func userID(_ text: String, verb: String) throws(UsageError) -> UInt32 {
        if let uid = UInt32(text) { return uid }
        guard let entry = getpwnam(text) else { throw UsageError("no such user '\(text)'", verb: verb) }
        return entry.pointee.pw_uid
    }

    static func portNumber(_ text: String, verb: String) throws(UsageError) -> UInt32 {
        guard let port = UInt32(text), port >= 1, port <= 65_535 else {
            throw UsageError("invalid port '\(text)': expected 1-65535", verb: verb)
        }
        return port
    }

    /// The item selection of a native item verb.
    static func selection(_ parsed: ParsedCommand, requireName: Bool) throws(UsageError) -> ItemSelection {
        let verb = parsed.verb
        let internet = parsed.has("internet")
        var item = ItemSelection(
            itemClass: internet ? .internetPassword : .genericPassword, keyAttributes: [:], otherAttributes: [:])
        let internetOnly: [(String, AttributeTag)] = [
            ("server", .server), ("protocol", .protocol), ("path", .path), ("security-domain", .securityDomain),
            ("auth-type", .authenticationType),
        ]
        for (name, tag) in internetOnly {
            guard let value = parsed.value(name) else { continue }
            guard internet else { throw UsageError("option --\(name) needs --internet", verb: verb) }
            item.keyAttributes[tag] = .string(value)
        }
        if let port = parsed.value("port") {
            guard internet else { throw UsageError("option --port needs --internet", verb: verb) }
            item.keyAttributes[.port] = .uint32(try portNumber(port, verb: verb))
        }
        if let service = parsed.value("service") {
            guard !internet else {
                throw UsageError("option --service is for generic passwords; use --server", verb: verb)
            }
            item.keyAttributes[.service] = .string(service)
        }
        if let account = parsed.value("account") { item.keyAttributes[.account] = .string(account) }
        if let group = parsed.value("access-group") { item.keyAttributes[.accessGroup] = .string(group) }
        if parsed.has("synchronizable") { item.keyAttributes[.synchronizable] = .bool(true) }
        if let label = parsed.value("label") { item.otherAttributes[.label] = .string(label) }
        if let text = parsed.value("description") { item.otherAttributes[.description] = .string(text) }
        if let text = parsed.value("comment") { item.otherAttributes[.comment] = .string(text) }
        if let name = parsed.value("accessible") {
            guard let match = accessibilityNames.first(where: { $0.0 == name }) else {
                throw UsageError("invalid accessibility class '\(name)' (see arca help \(verb))", verb: verb)
            }
            item.otherAttributes[.accessible] = .accessibility(match.1)
        }
        if requireName {
            let nameTag: AttributeTag = internet ? .server : .service
            guard item.keyAttributes[nameTag] != nil else {
                throw UsageError("'\(verb)' needs \(internet ? "--server" : "--service")", verb: verb)
            }
        }
        return item
    }
}
