import ArcaProtocol

/// The command table: every verb and option of `arca`. Each row carries its
/// handler; a new verb is a new row (in its own file, added to ``verbs``), and
/// `--help`, `help VERB`, the man-page tests and parsing all follow from it.
public enum CommandTable {
    /// `--socket PATH`, accepted by every verb.
    public static let socket = OptionSpec(
        .socket, .value("PATH"), "arcad's socket (default: $ARCA_SOCKET, else \(ArcadSocket.defaultPath))")
    /// `-h, --help`, accepted by every verb.
    public static let help = OptionSpec(.help, short: "h", "show this help and exit")
    /// `--json`, accepted by query verbs.
    public static let json = OptionSpec(.json, "print JSON (schema in arca(1))")
    /// Options every verb accepts.
    public static let globalOptions = [socket, help]

    static let noKernel = OptionSpec(.noKernel, "ask arcad over the socket; skip the kernel keyring")
    static let showSecret = OptionSpec(.showSecret, short: "w", "include the secrets in the output")

    static let system = OptionSpec(.system, "the system vault (ARCHITECTURE §8; writes are root only)")

    /// Who may read a system item.
    static let allowOptions: [OptionSpec] = [
        OptionSpec(.allowUser, .value("USERS"), "users (names or uids, comma-separated) who may read it"),
        OptionSpec(.allowGroup, .value("GROUPS"), "groups (names or gids, comma-separated) whose members may read it"),
        OptionSpec(
            .allowUnit, .value("UNITS"),
            "systemd units, UNIT[:ID] comma-separated, served to LoadCredential=ID (ID defaults to the service)"),
    ]

    /// The primary-key and descriptive attributes of an item.
    static let itemOptions: [OptionSpec] = [
        OptionSpec(.service, short: "s", .value("SERVICE"), "kSecAttrService (generic passwords)"),
        OptionSpec(.account, short: "a", .value("ACCOUNT"), "kSecAttrAccount"),
        OptionSpec(.label, short: "l", .value("LABEL"), "kSecAttrLabel"),
        OptionSpec(.itemDescription, .value("TEXT"), "kSecAttrDescription (the item's kind)"),
        OptionSpec(.comment, .value("TEXT"), "kSecAttrComment"),
        OptionSpec(.accessGroup, short: "g", .value("GROUP"), "kSecAttrAccessGroup"),
        OptionSpec(
            .accessible, .value("CLASS"),
            "when-unlocked (default), after-first-unlock, when-unlocked-this-device-only, "
                + "after-first-unlock-this-device-only, when-passcode-set-this-device-only"),
        OptionSpec(.synchronizable, "kSecAttrSynchronizable"),
        OptionSpec(.internet, "an internet password (kSecClassInternetPassword) instead of a generic one"),
        OptionSpec(.server, .value("HOST"), "kSecAttrServer (with --internet)"),
        OptionSpec(.protocol, .value("PROTO"), "kSecAttrProtocol, a four-letter code such as htps (with --internet)"),
        OptionSpec(.port, .value("PORT"), "kSecAttrPort, 1-65535 (with --internet)"),
        OptionSpec(.path, .value("PATH"), "kSecAttrPath (with --internet)"),
        OptionSpec(.securityDomain, .value("DOMAIN"), "kSecAttrSecurityDomain (with --internet)"),
        OptionSpec(.authType, .value("TYPE"), "kSecAttrAuthenticationType, a four-letter code (with --internet)"),
    ]

    /// Every verb, in the order `arca --help` lists them (the `security` verbs in their own section).
    public static let verbs: [VerbSpec] = nativeVerbs + backupVerbs + securityVerbs + syncVerbs + conflictVerbs

    /// Arca's own verbs.
    static let nativeVerbs: [VerbSpec] = [
        VerbSpec(
            "init", "create your vault with a password (where PAM is not enabled yet)",
            options: [OptionSpec(.noRecoveryKey, "do not print the recovery key arcad returns")]
        ) { parsed throws(UsageError) in try Validation.initVault(parsed) },
        VerbSpec(
            "add", "add an item; the secret is read from stdin or a prompt",
            options: itemOptions + [OptionSpec(.update, short: "U", "replace the item if it exists"), system]
                + allowOptions
        ) { parsed throws(UsageError) in try Validation.add(parsed) },
        VerbSpec(
            "get", "print an item's secret (kernel keyring first)", options: itemOptions + [noKernel, system],
            json: true
        ) { parsed throws(UsageError) in try Validation.get(parsed) },
        VerbSpec(
            "find", "print the attributes of the matching items",
            options: itemOptions + [showSecret, conflicts], json: true
        ) { parsed throws(UsageError) in try Validation.find(parsed) },
        VerbSpec(
            "update", "change an item's secret (from stdin or a prompt) and descriptive attributes",
            options: itemOptions + [OptionSpec(.keepSecret, "change only the attributes")]
        ) { parsed throws(UsageError) in try Validation.update(parsed) },
        VerbSpec(
            "delete", "delete the matching items", options: itemOptions + [system]
        ) { parsed throws(UsageError) in try Validation.delete(parsed) },
        VerbSpec(
            "list", "list every item (attributes only)", options: [showSecret], json: true
        ) { parsed throws(UsageError) in try Validation.list(parsed) },
        VerbSpec("clear", "delete every item of your vault") { _ throws(UsageError) in .clear },
        VerbSpec(
            "lock", "remove your when-unlocked items from the kernel",
            options: [OptionSpec(.all, "remove every class (root: every user's)")]
        ) { parsed throws(UsageError) in .lock(all: parsed.has(.all)) },
        VerbSpec("unlock", "unlock your vault with its password") { _ throws(UsageError) in .unlock(.standardInput) },
        VerbSpec(
            "status", "show your vault's lock state",
            options: [OptionSpec(.user, short: "u", .value("USER"), "another user's vault (root only)")], json: true
        ) { parsed throws(UsageError) in try Validation.status(parsed) },
        VerbSpec(
            "passwd", "change the vault password",
            options: [
                OptionSpec(.resync, "bring the vault back in line after an administrator reset"),
                OptionSpec(.recover, "use the recovery key instead of the current password"),
            ]
        ) { parsed throws(UsageError) in try Validation.passwd(parsed) },
        VerbSpec(
            "recovery", "tell whether a recovery key exists; --rotate makes a new one",
            options: [OptionSpec(.rotate, "replace the recovery key (asks for the password)")], json: true
        ) { parsed throws(UsageError) in .recovery(rotate: parsed.has(.rotate), json: parsed.wantsJSON) },
        VerbSpec(
            "grant", "let users, groups or units read a system item (root only)", options: itemOptions + allowOptions
        ) { parsed throws(UsageError) in try Validation.grant(parsed) },
        VerbSpec(
            "revoke", "withdraw the given grants of a system item, or all of them (root only)",
            options: itemOptions + allowOptions
        ) { parsed throws(UsageError) in try Validation.revoke(parsed) },
        VerbSpec("grants", "list who may read which system item (root only)", json: true) {
            parsed throws(UsageError) in .grants(json: parsed.wantsJSON)
        },
        VerbSpec(
            "fleet", "deliver service secrets to many hosts through etcd: runs arca-fleetd(8) with the arguments",
            positionals: "VERB [ARGS...]", maximumPositionals: 64
        ) { parsed throws(UsageError) in
            // The arca binary execs arca-fleetd before parsing (CLI.main): only an in-process run gets here,
            // and it must never replace its caller.
            .action(
                VerbAction(verb: parsed.verb, arguments: parsed.positionals) { _, _ throws(CLIError) in
                    throw .usage(UsageError("'fleet' runs arca-fleetd; see arca-fleetd(8)", verb: "fleet"))
                })
        },
        VerbSpec("show", "show Arca's kernel keyrings and key ids, like keyctl show", json: true) {
            parsed throws(UsageError) in .show(json: parsed.wantsJSON)
        },
        VerbSpec("version", "print the version", json: true) { parsed throws(UsageError) in
            .version(json: parsed.wantsJSON)
        },
        VerbSpec(
            "help", "show help for a verb", positionals: "[VERB]", maximumPositionals: 1
        ) { parsed throws(UsageError) in try Validation.help(parsed) },
    ]

    /// The verb named `name`.
    public static func verb(named name: String) -> VerbSpec? {
        verbs.first { $0.name == name }
    }
}
