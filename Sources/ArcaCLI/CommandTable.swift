/// One option of a verb, as the command table declares it. The same entry drives
/// parsing, `--help`, `help <verb>` and the man page's option list.
public struct OptionSpec: Sendable, Equatable {
    /// How an option takes its value.
    public enum Arity: Sendable, Equatable {
        /// A flag: no value.
        case flag
        /// A value is required (`--opt=value`, `--opt value`, `-o value`).
        case value(String)
        /// A value may follow; when the next word is missing or starts with `-`,
        /// the option stands alone (macOS `security -w` compatibility).
        case optionalValue(String)
    }

    /// The long name without dashes (`service`); compatibility verbs use the
    /// short letter as the long name (`w`), which is never spelled `--w`.
    public var name: String
    /// The one-letter spelling (`-s`), if any.
    public var short: Character?
    /// Whether and how it takes a value.
    public var arity: Arity
    /// One line for `--help` and the man page.
    public var help: String
    /// Whether the long spelling `--name` is accepted (false for the `security` verbs' letters).
    public var hasLongForm: Bool

    /// An option from its parts.
    public init(_ name: String, short: Character? = nil, _ arity: Arity, _ help: String, long: Bool = true) {
        self.name = name
        self.short = short
        self.arity = arity
        self.help = help
        self.hasLongForm = long
    }

    /// A flag from its parts.
    public init(_ name: String, short: Character? = nil, _ help: String, long: Bool = true) {
        self.init(name, short: short, .flag, help, long: long)
    }

    /// `-s, --service SERVICE` as shown by help and the man page.
    public var spelling: String {
        var parts: [String] = []
        if let short { parts.append("-\(short)") }
        if hasLongForm { parts.append("--\(name)") }
        var text = parts.joined(separator: ", ")
        switch arity {
        case .flag: break
        case .value(let placeholder): text += " " + placeholder
        case .optionalValue(let placeholder): text += " [" + placeholder + "]"
        }
        return text
    }
}

/// One verb of `arca`: its name, summary, options and positional arguments.
public struct VerbSpec: Sendable {
    /// The verb as typed (`get`, `add-generic-password`).
    public var name: String
    /// One line for the verb list.
    public var summary: String
    /// Options besides the global ones.
    public var options: [OptionSpec]
    /// Positional arguments in the synopsis (`[VERB]`), empty for none.
    public var positionals: String
    /// The most positional words accepted.
    public var maximumPositionals: Int
    /// Whether it answers `--json`.
    public var acceptsJSON: Bool
    /// Whether it is one of macOS `security`'s verbs.
    public var isCompatibility: Bool

    init(
        _ name: String, _ summary: String, options: [OptionSpec] = [], positionals: String = "",
        maximumPositionals: Int = 0, json: Bool = false, compatibility: Bool = false
    ) {
        self.name = name
        self.summary = summary
        self.options = options
        self.positionals = positionals
        self.maximumPositionals = maximumPositionals
        self.acceptsJSON = json
        self.isCompatibility = compatibility
    }

    /// Every option this verb accepts: its own, then `--json` if a query, then the global ones.
    public var allOptions: [OptionSpec] {
        options + (acceptsJSON ? [CommandTable.json] : []) + CommandTable.globalOptions
    }

    /// The synopsis line: `arca get [options]`.
    public var synopsis: String {
        var text = "arca " + name
        if !allOptions.isEmpty { text += " [options]" }
        if !positionals.isEmpty { text += " " + positionals }
        return text
    }
}

/// The command table: every verb and option of `arca`.
public enum CommandTable {
    /// `--socket PATH`, accepted by every verb.
    public static let socket = OptionSpec(
        "socket", .value("PATH"), "arcad's socket (default: $ARCA_SOCKET, else /run/arca/arcad.sock)")
    /// `-h, --help`, accepted by every verb.
    public static let help = OptionSpec("help", short: "h", "show this help and exit")
    /// `--json`, accepted by query verbs.
    public static let json = OptionSpec("json", "print JSON (schema in arca(1))")
    /// Options every verb accepts.
    public static let globalOptions = [socket, help]

    static let noKernel = OptionSpec("no-kernel", "ask arcad over the socket; skip the kernel keyring")
    static let showSecret = OptionSpec("show-secret", short: "w", "include the secrets in the output")

    static let system = OptionSpec("system", "the system vault (ARCHITECTURE §8; writes are root only)")

    /// Who may read a system item.
    static let allowOptions: [OptionSpec] = [
        OptionSpec("allow-user", .value("USERS"), "users (names or uids, comma-separated) who may read it"),
        OptionSpec("allow-group", .value("GROUPS"), "groups (names or gids, comma-separated) whose members may read it"),
        OptionSpec(
            "allow-unit", .value("UNITS"),
            "systemd units, UNIT[:ID] comma-separated, served to LoadCredential=ID (ID defaults to the service)"),
    ]

    /// The primary-key and descriptive attributes of an item.
    static let itemOptions: [OptionSpec] = [
        OptionSpec("service", short: "s", .value("SERVICE"), "kSecAttrService (generic passwords)"),
        OptionSpec("account", short: "a", .value("ACCOUNT"), "kSecAttrAccount"),
        OptionSpec("label", short: "l", .value("LABEL"), "kSecAttrLabel"),
        OptionSpec("description", .value("TEXT"), "kSecAttrDescription (the item's kind)"),
        OptionSpec("comment", .value("TEXT"), "kSecAttrComment"),
        OptionSpec("access-group", short: "g", .value("GROUP"), "kSecAttrAccessGroup"),
        OptionSpec(
            "accessible", .value("CLASS"),
            "when-unlocked (default), after-first-unlock, when-unlocked-this-device-only, "
                + "after-first-unlock-this-device-only, when-passcode-set-this-device-only"),
        OptionSpec("synchronizable", "kSecAttrSynchronizable"),
        OptionSpec("internet", "an internet password (kSecClassInternetPassword) instead of a generic one"),
        OptionSpec("server", .value("HOST"), "kSecAttrServer (with --internet)"),
        OptionSpec("protocol", .value("PROTO"), "kSecAttrProtocol, a four-letter code such as htps (with --internet)"),
        OptionSpec("port", .value("PORT"), "kSecAttrPort, 1-65535 (with --internet)"),
        OptionSpec("path", .value("PATH"), "kSecAttrPath (with --internet)"),
        OptionSpec("security-domain", .value("DOMAIN"), "kSecAttrSecurityDomain (with --internet)"),
        OptionSpec("auth-type", .value("TYPE"), "kSecAttrAuthenticationType, a four-letter code (with --internet)"),
    ]

    /// The letters of `security`'s password verbs.
    static func securityItemOptions(internet: Bool, add: Bool, find: Bool) -> [OptionSpec] {
        var options = [
            OptionSpec("a", short: "a", .value("ACCOUNT"), "account name", long: false),
            OptionSpec("s", short: "s", .value(internet ? "SERVER" : "SERVICE"),
                       internet ? "server name" : "service name", long: false),
        ]
        if internet {
            options += [
                OptionSpec("r", short: "r", .value("PROTOCOL"), "protocol, a four-letter code", long: false),
                OptionSpec("P", short: "P", .value("PORT"), "port number", long: false),
                OptionSpec("p", short: "p", .value("PATH"), "path", long: false),
                OptionSpec("d", short: "d", .value("DOMAIN"), "security domain", long: false),
                OptionSpec("t", short: "t", .value("AUTH"), "authentication type, a four-letter code", long: false),
            ]
        }
        options += [
            OptionSpec("l", short: "l", .value("LABEL"), "label", long: false),
            OptionSpec("j", short: "j", .value("COMMENT"), "comment", long: false),
            OptionSpec("D", short: "D", .value("KIND"), "kind (kSecAttrDescription)", long: false),
        ]
        if add {
            options += [
                OptionSpec(
                    "w", short: "w", .optionalValue("PASSWORD"),
                    "the password; a value on the command line is accepted with a warning, "
                        + "alone it reads stdin", long: false),
                OptionSpec("U", short: "U", "update the item if it exists", long: false),
            ]
        }
        if find {
            options += [
                OptionSpec("w", short: "w", "print only the password", long: false),
                OptionSpec("g", short: "g", "also print the password, on stderr", long: false),
            ]
        }
        return options
    }

    /// Every verb, in the order `arca --help` lists them.
    public static let verbs: [VerbSpec] = [
        VerbSpec(
            "init", "create your vault with a password (where PAM is not enabled yet)",
            options: [OptionSpec("no-recovery-key", "do not print the recovery key arcad returns")]),
        VerbSpec(
            "add", "add an item; the secret is read from stdin or a prompt",
            options: itemOptions + [OptionSpec("update", short: "U", "replace the item if it exists"), system]
                + allowOptions),
        VerbSpec(
            "get", "print an item's secret (kernel keyring first)", options: itemOptions + [noKernel, system],
            json: true),
        VerbSpec(
            "find", "print the attributes of the matching items",
            options: itemOptions + [showSecret], json: true),
        VerbSpec(
            "update", "change an item's secret (from stdin or a prompt) and descriptive attributes",
            options: itemOptions + [OptionSpec("keep-secret", "change only the attributes")]),
        VerbSpec("delete", "delete the matching items", options: itemOptions + [system]),
        VerbSpec("list", "list every item (attributes only)", options: [showSecret], json: true),
        VerbSpec("clear", "delete every item of your vault"),
        VerbSpec(
            "lock", "remove your when-unlocked items from the kernel",
            options: [OptionSpec("all", "remove every class (root: every user's)")]),
        VerbSpec("unlock", "unlock your vault with its password"),
        VerbSpec(
            "status", "show your vault's lock state",
            options: [OptionSpec("user", short: "u", .value("USER"), "another user's vault (root only)")], json: true),
        VerbSpec(
            "passwd", "change the vault password",
            options: [
                OptionSpec("resync", "bring the vault back in line after an administrator reset"),
                OptionSpec("recover", "use the recovery key instead of the current password"),
            ]),
        VerbSpec(
            "recovery", "tell whether a recovery key exists; --rotate makes a new one",
            options: [OptionSpec("rotate", "replace the recovery key (asks for the password)")], json: true),
        VerbSpec(
            "grant", "let users, groups or units read a system item (root only)", options: itemOptions + allowOptions),
        VerbSpec(
            "revoke", "withdraw the given grants of a system item, or all of them (root only)",
            options: itemOptions + allowOptions),
        VerbSpec("grants", "list who may read which system item (root only)", json: true),
        VerbSpec(
            "export", "write an encrypted backup of every item except ThisDeviceOnly ones",
            options: [
                OptionSpec("to", .value("FILE"), "the new backup file (never overwritten; mode 0600)"),
                OptionSpec("passphrase", "seal to a passphrase read from stdin instead of the recovery key"),
            ]),
        VerbSpec(
            "import", "merge an encrypted backup into your vault (importing it again changes nothing)",
            options: [OptionSpec("from", .value("FILE"), "the backup file")]),
        VerbSpec("show", "show Arca's kernel keyrings and key ids, like keyctl show", json: true),
        VerbSpec("version", "print the version", json: true),
        VerbSpec("help", "show help for a verb", positionals: "[VERB]", maximumPositionals: 1),
        VerbSpec(
            "add-generic-password", "macOS security: add a generic password",
            options: securityItemOptions(internet: false, add: true, find: false), compatibility: true),
        VerbSpec(
            "find-generic-password", "macOS security: find a generic password",
            options: securityItemOptions(internet: false, add: false, find: true), compatibility: true),
        VerbSpec(
            "delete-generic-password", "macOS security: delete a generic password",
            options: securityItemOptions(internet: false, add: false, find: false), compatibility: true),
        VerbSpec(
            "add-internet-password", "macOS security: add an internet password",
            options: securityItemOptions(internet: true, add: true, find: false), compatibility: true),
        VerbSpec(
            "find-internet-password", "macOS security: find an internet password",
            options: securityItemOptions(internet: true, add: false, find: true), compatibility: true),
        VerbSpec(
            "delete-internet-password", "macOS security: delete an internet password",
            options: securityItemOptions(internet: true, add: false, find: false), compatibility: true),
        VerbSpec(
            "lock-keychain", "macOS security: lock (-a: every class, as lock --all)",
            options: [OptionSpec("a", short: "a", "lock everything", long: false)], compatibility: true),
        VerbSpec(
            "unlock-keychain", "macOS security: unlock; -p PASSWORD is accepted with a warning",
            options: [
                OptionSpec("p", short: "p", .value("PASSWORD"), "the password (visible to other users)", long: false),
                OptionSpec("u", short: "u", "read the password from stdin or a prompt (the default)", long: false),
            ], compatibility: true),
    ]

    /// The verb named `name`.
    public static func verb(named name: String) -> VerbSpec? {
        verbs.first { $0.name == name }
    }
}
