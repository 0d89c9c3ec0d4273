/// The command line of arca-fleetd: a verb, `--name value` / `--name=value` / `-s`/`-a`
/// options, flags, and positionals. Every option given must be used by the verb (`done()`).
struct FleetOptions {
    static let valued: Set<String> = [
        "conf", "host", "admin-key", "manifest-lifetime", "group", "service", "account", "allow-user", "allow-group",
        "allow-unit",
    ]
    static let flagNames: Set<String> = ["json", "local", "help"]
    static let shorts: [Character: String] = ["s": "service", "a": "account", "h": "help"]

    var verb = ""
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var used: Set<String> = ["conf"]

    static func parse(_ arguments: [String]) throws(FleetError) -> FleetOptions {
        var options = FleetOptions()
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            var name: String?
            var inline: String?
            if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let parts = body.split(separator: "=", maxSplits: 1).map(String.init)
                name = parts.first
                inline = parts.count > 1 ? parts[1] : nil
            } else if word.count == 2, word.hasPrefix("-"), let letter = word.last {
                guard let long = shorts[letter] else { throw .usage("unknown option \(word)") }
                name = long
            }
            guard let name else {
                if options.verb.isEmpty { options.verb = word } else { options.positionals.append(word) }
                continue
            }
            if flagNames.contains(name) {
                options.flags.insert(name)
            } else if valued.contains(name) {
                guard let value = inline ?? (index < arguments.count ? arguments[index] : nil) else {
                    throw .usage("--\(name) needs a value")
                }
                if inline == nil { index += 1 }
                options.values[name, default: []].append(value)
            } else {
                throw .usage("unknown option --\(name)")
            }
        }
        if options.verb.isEmpty && !options.flags.contains("help") { throw .usage("a verb is required") }
        return options
    }

    mutating func value(_ name: String) -> String? {
        used.insert(name)
        return values[name]?.last
    }

    mutating func required(_ name: String) throws(FleetError) -> String {
        guard let value = value(name), !value.isEmpty else { throw .usage("\(verb) needs --\(name)") }
        return value
    }

    /// Comma-separated values of every occurrence.
    mutating func list(_ name: String) -> [String] {
        used.insert(name)
        return (values[name] ?? []).flatMap { $0.split(separator: ",").map(String.init) }
    }

    mutating func positionals(_ what: String) throws(FleetError) -> [String] {
        guard !positionals.isEmpty else { throw .usage("\(verb) takes one or more \(what)") }
        used.insert("#positional")
        return positionals
    }

    mutating func positional(_ what: String) throws(FleetError) -> String {
        guard positionals.count == 1 else { throw .usage("\(verb) takes one \(what)") }
        used.insert("#positional")
        return positionals[0]
    }

    /// Refuses valued options and positionals the verb did not read (nothing is silently
    /// ignored); flags were checked against the verb's row before it ran (``refuse(except:)``).
    func done() throws(FleetError) {
        if let extra = values.keys.first(where: { !used.contains($0) }) {
            throw .usage("\(verb) does not take --\(extra)")
        }
        if !positionals.isEmpty && !used.contains("#positional") { throw .usage("\(verb) takes no arguments") }
    }

    /// Refuses a flag not in `flags` and a valued option not in `values` (nor `--conf`): the
    /// verb's row (``FleetVerb/flags``, ``FleetVerb/values``).
    func refuse(except taken: (flags: Set<String>, values: Set<String>)) throws(FleetError) {
        if let flag = flags.sorted().first(where: { !taken.flags.contains($0) }) {
            throw .usage("\(verb) does not take --\(flag)")
        }
        if let value = values.keys.sorted().first(where: { $0 != "conf" && !taken.values.contains($0) }) {
            throw .usage("\(verb) does not take --\(value)")
        }
    }
}
