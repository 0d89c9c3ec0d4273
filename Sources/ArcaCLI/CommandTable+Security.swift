/// The verbs of macOS `security`, with its one-letter options, so scripts written
/// for a Mac keep working.
extension CommandTable {
    /// The letters of `security`'s password verbs.
    static func securityItemOptions(internet: Bool, add: Bool, find: Bool) -> [OptionSpec] {
        var options = [
            OptionSpec(.securityAccount, short: "a", .value("ACCOUNT"), "account name", long: false),
            OptionSpec(
                .securityService, short: "s", .value(internet ? "SERVER" : "SERVICE"),
                internet ? "server name" : "service name", long: false),
        ]
        if internet {
            options += [
                OptionSpec(
                    .securityProtocol, short: "r", .value("PROTOCOL"), "protocol, a four-letter code", long: false),
                OptionSpec(.securityPort, short: "P", .value("PORT"), "port number", long: false),
                OptionSpec(.securityPath, short: "p", .value("PATH"), "path", long: false),
                OptionSpec(.securityDomainLetter, short: "d", .value("DOMAIN"), "security domain", long: false),
                OptionSpec(
                    .securityAuthType, short: "t", .value("AUTH"), "authentication type, a four-letter code",
                    long: false),
            ]
        }
        options += [
            OptionSpec(.securityLabel, short: "l", .value("LABEL"), "label", long: false),
            OptionSpec(.securityComment, short: "j", .value("COMMENT"), "comment", long: false),
            OptionSpec(.securityKind, short: "D", .value("KIND"), "kind (kSecAttrDescription)", long: false),
        ]
        if add {
            options += [
                OptionSpec(
                    .securityPassword, short: "w", .optionalValue("PASSWORD"),
                    "the password; a value on the command line is accepted with a warning, "
                        + "alone it reads stdin", long: false),
                OptionSpec(.securityUpdate, short: "U", "update the item if it exists", long: false),
            ]
        }
        if find {
            options += [
                OptionSpec(.securityPasswordOnly, short: "w", "print only the password", long: false),
                OptionSpec(.securityPasswordOnStderr, short: "g", "also print the password, on stderr", long: false),
            ]
        }
        return options
    }

    /// `security`'s verbs, listed in their own section of `arca --help`.
    static let securityVerbs: [VerbSpec] = [
        VerbSpec(
            "add-generic-password", "macOS security: add a generic password",
            options: securityItemOptions(internet: false, add: true, find: false), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityAdd(parsed, internet: false) },
        VerbSpec(
            "find-generic-password", "macOS security: find a generic password",
            options: securityItemOptions(internet: false, add: false, find: true), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityFind(parsed, internet: false) },
        VerbSpec(
            "delete-generic-password", "macOS security: delete a generic password",
            options: securityItemOptions(internet: false, add: false, find: false), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityDelete(parsed, internet: false) },
        VerbSpec(
            "add-internet-password", "macOS security: add an internet password",
            options: securityItemOptions(internet: true, add: true, find: false), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityAdd(parsed, internet: true) },
        VerbSpec(
            "find-internet-password", "macOS security: find an internet password",
            options: securityItemOptions(internet: true, add: false, find: true), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityFind(parsed, internet: true) },
        VerbSpec(
            "delete-internet-password", "macOS security: delete an internet password",
            options: securityItemOptions(internet: true, add: false, find: false), compatibility: true
        ) { parsed throws(UsageError) in try Validation.securityDelete(parsed, internet: true) },
        VerbSpec(
            "lock-keychain", "macOS security: lock (-a: every class, as lock --all)",
            options: [OptionSpec(.securityLockAll, short: "a", "lock everything", long: false)], compatibility: true
        ) { parsed throws(UsageError) in .lock(all: parsed.has(.securityLockAll)) },
        VerbSpec(
            "unlock-keychain", "macOS security: unlock; -p PASSWORD is accepted with a warning",
            options: [
                OptionSpec(
                    .securityUnlockPassword, short: "p", .value("PASSWORD"), "the password (visible to other users)",
                    long: false),
                OptionSpec(
                    .securityPrompt, short: "u", "read the password from stdin or a prompt (the default)", long: false),
            ], compatibility: true
        ) { parsed throws(UsageError) in
            guard let password = parsed.value(.securityUnlockPassword) else { return .unlock(.standardInput) }
            return .unlock(.commandLine(password))
        },
    ]
}

/// The one-letter options of the `security` verbs. A letter means different things
/// in different verbs (`-a` is the account, or "all" for `lock-keychain`), so each
/// meaning has its own key; keys of one letter are one option to the parser.
extension OptionKey {
    /// `-a ACCOUNT`.
    public static let securityAccount = OptionKey("a")
    /// `-s SERVICE` (`-s SERVER` for internet passwords).
    public static let securityService = OptionKey("s")
    /// `-r PROTOCOL`.
    public static let securityProtocol = OptionKey("r")
    /// `-P PORT`.
    public static let securityPort = OptionKey("P")
    /// `-p PATH`.
    public static let securityPath = OptionKey("p")
    /// `-d DOMAIN`.
    public static let securityDomainLetter = OptionKey("d")
    /// `-t AUTH`.
    public static let securityAuthType = OptionKey("t")
    /// `-l LABEL`.
    public static let securityLabel = OptionKey("l")
    /// `-j COMMENT`.
    public static let securityComment = OptionKey("j")
    /// `-D KIND`.
    public static let securityKind = OptionKey("D")
    /// `-w [PASSWORD]` of the add verbs.
    public static let securityPassword = OptionKey("w")
    /// `-U` of the add verbs.
    public static let securityUpdate = OptionKey("U")
    /// `-w` of the find verbs: print only the password.
    public static let securityPasswordOnly = OptionKey("w")
    /// `-g` of the find verbs: also the password, on stderr.
    public static let securityPasswordOnStderr = OptionKey("g")
    /// `-a` of `lock-keychain`: every class.
    public static let securityLockAll = OptionKey("a")
    /// `-p PASSWORD` of `unlock-keychain`.
    public static let securityUnlockPassword = OptionKey("p")
    /// `-u` of `unlock-keychain`.
    public static let securityPrompt = OptionKey("u")
}
