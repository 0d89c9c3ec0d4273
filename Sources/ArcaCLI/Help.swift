/// Help texts and the man page synopsis, all generated from ``CommandTable``.
public enum Help {
    /// `arca --help`: the verbs and the global options.
    public static func overview() -> String {
        var lines = [
            "arca: the command-line tool of Arca, a Keychain for Linux", "",
            "usage: arca [--socket PATH] <verb> [options]", "", "verbs:",
        ]
        let width = CommandTable.verbs.map(\.name.count).max() ?? 0
        for verb in CommandTable.verbs where !verb.isCompatibility {
            lines.append("  " + padded(verb.name, width) + "  " + verb.summary)
        }
        lines += ["", "macOS security compatibility verbs:"]
        for verb in CommandTable.verbs where verb.isCompatibility {
            lines.append("  " + padded(verb.name, width) + "  " + verb.summary)
        }
        lines += ["", "global options:"]
        lines += optionLines(CommandTable.globalOptions)
        lines += [
            "", "Secrets are read from stdin or a no-echo prompt, never from arguments.",
            "'arca help <verb>' shows a verb's options; arca(1) documents exit codes and JSON.",
        ]
        return lines.joined(separator: "\n")
    }

    /// `arca help <verb>` and `arca <verb> --help`.
    public static func verb(_ spec: VerbSpec) -> String {
        var lines = ["usage: " + spec.synopsis, "", spec.summary, "", "options:"]
        lines += optionLines(spec.allOptions)
        return lines.joined(separator: "\n")
    }

    static func optionLines(_ options: [OptionSpec]) -> [String] {
        let width = options.map(\.spelling.count).max() ?? 0
        return options.map { "  " + padded($0.spelling, width) + "  " + $0.help }
    }

    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// The usage line printed after a usage error.
    public static func usageLine(for verb: String?) -> String {
        guard let verb, let spec = CommandTable.verb(named: verb) else { return Parser.globalUsage }
        return "usage: " + spec.synopsis
    }

    /// The SYNOPSIS section of arca(1), in roff: one line per verb, options in brackets.
    public static func manSynopsis() -> String {
        var lines: [String] = []
        for verb in CommandTable.verbs {
            var line = ".B arca\n.RB [ \\-\\-socket\n.IR PATH ]\n.B \(roff(verb.name))"
            for option in verb.options + (verb.acceptsJSON ? [CommandTable.json] : []) {
                line += "\n.RB [ \"" + manSpelling(option) + "\" ]"
            }
            if !verb.positionals.isEmpty { line += "\n.RI " + roff(verb.positionals) }
            lines.append(line)
        }
        return lines.joined(separator: "\n.br\n")
    }

    /// `-s SERVICE` or `--json`: the shortest spelling, as the synopsis shows it.
    static func manSpelling(_ option: OptionSpec) -> String {
        let flag = roff(option.short.map { "-\($0)" } ?? "--\(option.name)")
        switch option.arity {
        case .flag: return flag
        case .value(let placeholder): return flag + " \\fI" + placeholder + "\\fP"
        case .optionalValue(let placeholder): return flag + " [\\fI" + placeholder + "\\fP]"
        }
    }

    /// Escapes dashes for roff.
    static func roff(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "-" { out += "\\-" } else { out.append(character) }
        }
        return out
    }
}
