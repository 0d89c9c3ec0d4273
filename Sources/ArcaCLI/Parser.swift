/// A command line that failed to parse or validate. It is reported as
/// `error: <message>` and the usage line on stderr, with exit status 2.
public struct UsageError: Error, Equatable, Sendable {
    /// What is wrong, one line.
    public var message: String
    /// The verb whose usage line is shown; nil for the global usage.
    public var verb: String?

    /// A usage error about `verb` (nil: the command line as a whole).
    public init(_ message: String, verb: String? = nil) {
        self.message = message
        self.verb = verb
    }
}

/// A parsed command line: the verb, the options given and the positional words.
/// Parsing knows only the table; what the values mean is checked by validation.
public struct ParsedCommand: Sendable, Equatable {
    /// The verb's name.
    public var verb: String
    /// Options given: the value, or nil for a flag (and for an optional-value
    /// option given alone).
    public var options: OptionValues
    /// Positional words, in order.
    public var positionals: [String]
    /// `--socket`, given before or after the verb.
    public var socket: String?

    /// Whether the option was given.
    public func has(_ key: OptionKey) -> Bool { options[key] != nil }

    /// The value of the option, if it was given with one.
    public func value(_ key: OptionKey) -> String? { options[key] ?? nil }

    /// Whether `-h/--help` was given.
    public var wantsHelp: Bool { has(.help) }

    /// Whether `--json` was given.
    public var wantsJSON: Bool { has(.json) }
}

/// The command-line parser, driven by ``CommandTable``.
public enum Parser {
    /// The usage line shown for errors that name no verb.
    public static let globalUsage = "usage: arca [--socket PATH] <verb> [options]   (arca help: the verbs)"

    /// Parses `arguments` (without the program name).
    public static func parse(_ arguments: [String]) throws(UsageError) -> ParsedCommand {
        var words = arguments[...]
        var socket: String?
        var leadingHelp = false
        // Global options may come before the verb.
        while let word = words.first, word.hasPrefix("-") {
            words.removeFirst()
            switch word {
            case "-h", "--help":
                leadingHelp = true
            case "--version":
                return ParsedCommand(verb: "version", options: [:], positionals: [], socket: socket)
            case "--socket":
                guard let value = words.popFirst() else { throw UsageError("option --socket needs a value") }
                socket = value
            case _ where word.hasPrefix("--socket="):
                socket = String(word.dropFirst("--socket=".count))
            default:
                throw UsageError("unknown option '\(word)'")
            }
        }
        guard let verbName = words.popFirst() else {
            return ParsedCommand(verb: "help", options: [:], positionals: [], socket: socket)
        }
        guard let verb = CommandTable.verb(named: verbName) else {
            throw UsageError("unknown verb '\(verbName)'")
        }
        var parsed = try parseOptions(Array(words), of: verb)
        if leadingHelp { parsed.options[.help] = .some(nil) }
        if parsed.socket == nil { parsed.socket = socket }
        return parsed
    }

    static func parseOptions(_ words: [String], of verb: VerbSpec) throws(UsageError) -> ParsedCommand {
        var result = ParsedCommand(verb: verb.name, options: [:], positionals: [], socket: nil)
        let options = verb.allOptions
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || word == "-" || !word.hasPrefix("-") {
                result.positionals.append(word)
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            let spec: OptionSpec
            var inlineValue: String?
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name: Substring
                if let equals = body.firstIndex(of: "=") {
                    name = body[..<equals]
                    inlineValue = String(body[body.index(after: equals)...])
                } else {
                    name = body
                }
                guard let found = options.first(where: { $0.hasLongForm && $0.name == name }) else {
                    throw UsageError("unknown option '--\(name)' for '\(verb.name)'", verb: verb.name)
                }
                spec = found
            } else {
                let letter = word.dropFirst().first ?? "-"
                guard let found = options.first(where: { $0.short == letter }) else {
                    throw UsageError("unknown option '-\(letter)' for '\(verb.name)'", verb: verb.name)
                }
                spec = found
                if word.count > 2 { inlineValue = String(word.dropFirst(2)) }
            }
            let shown = spec.hasLongForm ? "--\(spec.name)" : "-\(spec.name)"
            guard result.options[spec.key] == nil else {
                throw UsageError("option \(shown) given twice", verb: verb.name)
            }
            switch spec.arity {
            case .flag:
                if inlineValue != nil { throw UsageError("option \(shown) takes no value", verb: verb.name) }
                result.options[spec.key] = .some(nil)
            case .value:
                if let inlineValue {
                    result.options[spec.key] = inlineValue
                } else if index < words.count {
                    result.options[spec.key] = words[index]
                    index += 1
                } else {
                    throw UsageError("option \(shown) needs a value", verb: verb.name)
                }
            case .optionalValue:
                if let inlineValue {
                    result.options[spec.key] = inlineValue
                } else if index < words.count, !words[index].hasPrefix("-") {
                    result.options[spec.key] = words[index]
                    index += 1
                } else {
                    result.options[spec.key] = .some(nil)
                }
            }
        }
        if let socket = result.options[.socket] {
            result.socket = socket
            result.options[.socket] = nil
        }
        if !result.wantsHelp, result.positionals.count > verb.maximumPositionals {
            let extra = result.positionals[verb.maximumPositionals]
            throw UsageError("unexpected argument '\(extra)'", verb: verb.name)
        }
        return result
    }
}
