import ArcaProtocol

/// The handlers of ``CommandTable``'s rows: each checks its verb's words and
/// returns the command to run. Verbs whose handler is one expression keep it in
/// their row.
extension Validation {
    static func help(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        if let name = parsed.positionals.first, CommandTable.verb(named: name) == nil {
            throw UsageError("unknown verb '\(name)'", verb: parsed.verb)
        }
        return .help(verb: parsed.positionals.first)
    }

    static func initVault(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        .initVault(showRecoveryKey: !parsed.has(.noRecoveryKey))
    }

    static func add(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let verb = parsed.verb
        let item = try selection(parsed, requireName: true)
        if parsed.has(.system) {
            return .systemAdd(
                try systemItem(item, verb: verb), grants: try principals(parsed, item: item),
                replaceExisting: parsed.has(.update))
        }
        if let key = [OptionKey.allowUser, .allowGroup, .allowUnit].first(where: parsed.has) {
            throw UsageError("option --\(key) needs --system", verb: verb)
        }
        return .add(item, secret: .standardInput, replaceExisting: parsed.has(.update), compatibility: false)
    }

    static func get(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let item = try selection(parsed, requireName: true)
        let useKernel = !parsed.has(.noKernel)
        if parsed.has(.system) {
            return .systemGet(try systemItem(item, verb: parsed.verb), useKernel: useKernel, json: parsed.wantsJSON)
        }
        return .get(item, useKernel: useKernel, json: parsed.wantsJSON)
    }

    static func find(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        if parsed.has(.conflicts) { return try findConflicts(parsed) }
        return .find(
            try selection(parsed, requireName: false), showSecrets: parsed.has(.showSecret), json: parsed.wantsJSON)
    }

    static func list(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        .find(nil, showSecrets: parsed.has(.showSecret), json: parsed.wantsJSON)
    }

    static func update(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let item = try selection(parsed, requireName: true)
        if parsed.has(.keepSecret), item.otherAttributes.isEmpty {
            throw UsageError("'update --keep-secret' needs an attribute to change", verb: parsed.verb)
        }
        return .update(item, secret: parsed.has(.keepSecret) ? nil : .standardInput)
    }

    static func delete(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let item = try selection(parsed, requireName: true)
        if parsed.has(.system) { return .systemDelete(try systemItem(item, verb: parsed.verb)) }
        return .delete(item, compatibility: false)
    }

    static func grant(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let item = try systemItem(try selection(parsed, requireName: true), verb: parsed.verb)
        let principals = try principals(parsed, item: item)
        if principals.isEmpty {
            throw UsageError("'grant' needs --allow-user, --allow-group or --allow-unit", verb: parsed.verb)
        }
        return .grant(item, principals: principals, revoke: false)
    }

    static func revoke(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        let item = try systemItem(try selection(parsed, requireName: true), verb: parsed.verb)
        return .grant(item, principals: try principals(parsed, item: item), revoke: true)
    }

    static func status(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        guard let name = parsed.value(.user) else { return .status(json: parsed.wantsJSON, user: nil) }
        return .status(json: parsed.wantsJSON, user: try userID(name, verb: parsed.verb))
    }

    static func passwd(_ parsed: ParsedCommand) throws(UsageError) -> Command {
        if parsed.has(.resync), parsed.has(.recover) {
            throw UsageError("--resync and --recover exclude each other", verb: parsed.verb)
        }
        return .passwd(resync: parsed.has(.resync), recover: parsed.has(.recover))
    }

    // MARK: macOS security verbs

    static func securityAdd(_ parsed: ParsedCommand, internet: Bool) throws(UsageError) -> Command {
        let secret: SecretSource = parsed.value(.securityPassword).map { .commandLine($0) } ?? .standardInput
        return .add(
            try securityItem(parsed, internet: internet), secret: secret, replaceExisting: parsed.has(.securityUpdate),
            compatibility: true)
    }

    static func securityFind(_ parsed: ParsedCommand, internet: Bool) throws(UsageError) -> Command {
        .compatibilityFind(
            try securityItem(parsed, internet: internet), passwordOnly: parsed.has(.securityPasswordOnly),
            passwordOnStderr: parsed.has(.securityPasswordOnStderr))
    }

    static func securityDelete(_ parsed: ParsedCommand, internet: Bool) throws(UsageError) -> Command {
        .delete(try securityItem(parsed, internet: internet), compatibility: true)
    }

    /// The item a `security` password verb names with its letters.
    static func securityItem(_ parsed: ParsedCommand, internet: Bool) throws(UsageError) -> ItemSelection {
        var item = ItemSelection(
            itemClass: internet ? .internetPassword : .genericPassword, keyAttributes: [:], otherAttributes: [:])
        func set(_ key: OptionKey, _ tag: AttributeTag, primary: Bool) {
            guard let value = parsed.value(key) else { return }
            if primary { item.keyAttributes[tag] = .string(value) } else { item.otherAttributes[tag] = .string(value) }
        }
        set(.securityAccount, .account, primary: true)
        set(.securityService, internet ? .server : .service, primary: true)
        set(.securityProtocol, .protocol, primary: true)
        set(.securityPath, .path, primary: true)
        set(.securityDomainLetter, .securityDomain, primary: true)
        set(.securityAuthType, .authenticationType, primary: true)
        set(.securityLabel, .label, primary: false)
        set(.securityComment, .comment, primary: false)
        set(.securityKind, .description, primary: false)
        if let port = parsed.value(.securityPort) {
            item.keyAttributes[.port] = .uint32(try portNumber(port, verb: parsed.verb))
        }
        return item
    }
}
