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

    /// The command `parsed` asks for, or why it cannot run: `--help`, else the
    /// handler of the verb's row in ``CommandTable``.
    public static func validate(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let verb = parsed.verb
        if parsed.wantsHelp { return .help(verb: verb == "help" ? (parsed.positionals.first ?? verb) : verb) }
        guard let spec = CommandTable.verb(named: verb) else { throw UsageError("unknown verb '\(verb)'") }
        return try spec.handler(parsed)
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
        func list(_ key: OptionKey) -> [String] {
            (parsed.value(key) ?? "").split(separator: ",").map(String.init).filter { !$0.isEmpty }
        }
        var result: [Principal] = []
        for name in list(.allowUser) { result.append(.user(try userID(name, verb: verb))) }
        for name in list(.allowGroup) { result.append(.group(try groupID(name, verb: verb))) }
        for spec in list(.allowUnit) {
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
        let internet = parsed.has(.internet)
        var item = ItemSelection(
            itemClass: internet ? .internetPassword : .genericPassword, keyAttributes: [:], otherAttributes: [:])
        let internetOnly: [(OptionKey, AttributeTag)] = [
            (.server, .server), (.protocol, .protocol), (.path, .path), (.securityDomain, .securityDomain),
            (.authType, .authenticationType),
        ]
        for (key, tag) in internetOnly {
            guard let value = parsed.value(key) else { continue }
            guard internet else { throw UsageError("option --\(key) needs --internet", verb: verb) }
            item.keyAttributes[tag] = .string(value)
        }
        if let port = parsed.value(.port) {
            guard internet else { throw UsageError("option --port needs --internet", verb: verb) }
            item.keyAttributes[.port] = .uint32(try portNumber(port, verb: verb))
        }
        if let service = parsed.value(.service) {
            guard !internet else {
                throw UsageError("option --service is for generic passwords; use --server", verb: verb)
            }
            item.keyAttributes[.service] = .string(service)
        }
        if let account = parsed.value(.account) { item.keyAttributes[.account] = .string(account) }
        if let group = parsed.value(.accessGroup) { item.keyAttributes[.accessGroup] = .string(group) }
        if parsed.has(.synchronizable) { item.keyAttributes[.synchronizable] = .bool(true) }
        if let label = parsed.value(.label) { item.otherAttributes[.label] = .string(label) }
        if let text = parsed.value(.itemDescription) { item.otherAttributes[.description] = .string(text) }
        if let text = parsed.value(.comment) { item.otherAttributes[.comment] = .string(text) }
        if let name = parsed.value(.accessible) {
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
