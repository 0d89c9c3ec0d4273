/// The name of an option, as handlers look it up: a typed key, so a handler that
/// asks for an option by a misspelt name does not compile. Every key is a static
/// below (and in `OptionKey+Security.swift` for the `security` verbs' letters).
public struct OptionKey: Hashable, Sendable, CustomStringConvertible {
    /// The long name without dashes (`service`), or the letter of a `security` verb's option.
    public let name: String

    init(_ name: String) { self.name = name }

    /// The name, as in `--name`.
    public var description: String { name }

    /// `--socket`.
    public static let socket = OptionKey("socket")
    /// `-h, --help`.
    public static let help = OptionKey("help")
    /// `--json`.
    public static let json = OptionKey("json")
    /// `export --to FILE`.
    public static let to = OptionKey("to")
    /// `import --from FILE` (or `--from secret-service`).
    public static let from = OptionKey("from")
    /// `export --passphrase`.
    public static let passphrase = OptionKey("passphrase")
    /// `--no-kernel`.
    public static let noKernel = OptionKey("no-kernel")
    /// `-w, --show-secret`.
    public static let showSecret = OptionKey("show-secret")
    /// `--system`.
    public static let system = OptionKey("system")
    /// `--allow-user`.
    public static let allowUser = OptionKey("allow-user")
    /// `--allow-group`.
    public static let allowGroup = OptionKey("allow-group")
    /// `--allow-unit`.
    public static let allowUnit = OptionKey("allow-unit")
    /// `-s, --service`.
    public static let service = OptionKey("service")
    /// `-a, --account`.
    public static let account = OptionKey("account")
    /// `-l, --label`.
    public static let label = OptionKey("label")
    /// `--description` (kSecAttrDescription).
    public static let itemDescription = OptionKey("description")
    /// `--comment`.
    public static let comment = OptionKey("comment")
    /// `-g, --access-group`.
    public static let accessGroup = OptionKey("access-group")
    /// `--accessible`.
    public static let accessible = OptionKey("accessible")
    /// `--synchronizable`.
    public static let synchronizable = OptionKey("synchronizable")
    /// `--internet`.
    public static let internet = OptionKey("internet")
    /// `--server`.
    public static let server = OptionKey("server")
    /// `--protocol`.
    public static let `protocol` = OptionKey("protocol")
    /// `--port`.
    public static let port = OptionKey("port")
    /// `--path`.
    public static let path = OptionKey("path")
    /// `--security-domain`.
    public static let securityDomain = OptionKey("security-domain")
    /// `--auth-type`.
    public static let authType = OptionKey("auth-type")
    /// `-U, --update` of `add`.
    public static let update = OptionKey("update")
    /// `--conflicts` of `find`.
    public static let conflicts = OptionKey("conflicts")
    /// `--keep-secret` of `update`.
    public static let keepSecret = OptionKey("keep-secret")
    /// `--no-recovery-key` of `init`.
    public static let noRecoveryKey = OptionKey("no-recovery-key")
    /// `--all` of `lock`.
    public static let all = OptionKey("all")
    /// `-u, --user` of `status`.
    public static let user = OptionKey("user")
    /// `--resync` of `passwd`.
    public static let resync = OptionKey("resync")
    /// `--recover` of `passwd`.
    public static let recover = OptionKey("recover")
    /// `--rotate` of `recovery`.
    public static let rotate = OptionKey("rotate")
    /// `--bus-name` of `import`.
    public static let busName = OptionKey("bus-name")
    /// `--collection` of `import`.
    public static let collection = OptionKey("collection")
    /// `--dry-run` of `import`.
    public static let dryRun = OptionKey("dry-run")
}

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

    /// The key handlers look the option up by.
    public var key: OptionKey
    /// The one-letter spelling (`-s`), if any.
    public var short: Character?
    /// Whether and how it takes a value.
    public var arity: Arity
    /// One line for `--help` and the man page.
    public var help: String
    /// Whether the long spelling `--name` is accepted (false for the `security` verbs' letters).
    public var hasLongForm: Bool

    /// The long name without dashes (`service`); compatibility verbs use the
    /// short letter as the long name (`w`), which is never spelled `--w`.
    public var name: String { key.name }

    /// An option from its parts.
    public init(_ key: OptionKey, short: Character? = nil, _ arity: Arity, _ help: String, long: Bool = true) {
        self.key = key
        self.short = short
        self.arity = arity
        self.help = help
        self.hasLongForm = long
    }

    /// A flag from its parts.
    public init(_ key: OptionKey, short: Character? = nil, _ help: String, long: Bool = true) {
        self.init(key, short: short, .flag, help, long: long)
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
