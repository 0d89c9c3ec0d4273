/// One verb of `arca`, a row of ``CommandTable``: its name, summary, options,
/// positional arguments, and its handler (keyctl's `{ act_keyctl_padd, "padd", … }`).
/// The handler validates the parsed words into the ``Command`` to run; nothing is
/// dispatched by the verb's name, so a row cannot end up running another verb's code.
public struct VerbSpec: Sendable {
    /// Validates a parsed command line of this verb into the command to run.
    public typealias Handler = @Sendable (ParsedCommand) throws(UsageError) -> Command

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
    /// Turns the parsed words into the command; runs only when `--help` was not given.
    public var handler: Handler

    init(
        _ name: String, _ summary: String, options: [OptionSpec] = [], positionals: String = "",
        maximumPositionals: Int = 0, json: Bool = false, compatibility: Bool = false, handler: @escaping Handler
    ) {
        self.name = name
        self.summary = summary
        self.options = options
        self.positionals = positionals
        self.maximumPositionals = maximumPositionals
        self.acceptsJSON = json
        self.isCompatibility = compatibility
        self.handler = handler
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
