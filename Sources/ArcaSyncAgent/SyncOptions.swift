/// The command line of arca-sync: a verb, `--name value` / `--name=value` options, flags and
/// positionals; `--` ends options. Every option given must be one the verb takes.
struct SyncOptions: Equatable {
    static let valued: Set<String> = ["syncthing-home", "folder", "socket", "address", "sas"]
    static let flagNames: Set<String> = ["json", "yes", "help"]
    static let common: Set<String> = ["syncthing-home", "folder", "socket", "help"]

    var verb = ""
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    static func parse(_ arguments: [String]) throws(SyncAgentError) -> SyncOptions {
        var options = SyncOptions()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if !optionsEnded && word == "--" {
                optionsEnded = true
                continue
            }
            guard !optionsEnded, word.hasPrefix("-"), word != "-" else {
                if options.verb.isEmpty { options.verb = word } else { options.positionals.append(word) }
                continue
            }
            let body = word == "-h" ? "help" : String(word.drop { $0 == "-" })
            let parts = body.split(separator: "=", maxSplits: 1).map(String.init)
            let name = parts.first ?? ""
            guard word.hasPrefix("--") || word == "-h" else { throw .usage("unknown option \(word)") }
            if flagNames.contains(name) {
                guard parts.count == 1 else { throw .usage("--\(name) takes no value") }
                options.flags.insert(name)
            } else if valued.contains(name) {
                guard let value = parts.count > 1 ? parts[1] : (index < arguments.count ? arguments[index] : nil) else {
                    throw .usage("--\(name) needs a value")
                }
                if parts.count == 1 { index += 1 }
                options.values[name] = value
            } else {
                throw .usage("unknown option --\(name)")
            }
        }
        if options.flags.contains("help") || options.verb == "help" { return options }
        guard !options.verb.isEmpty else { throw .usage("a verb is required") }
        guard let verb = SyncVerb.named(options.verb) else { throw .usage("unknown verb \(options.verb)") }
        let given = Set(options.values.keys).union(options.flags)
        if let extra = given.subtracting(verb.options).subtracting(common).sorted().first {
            throw .usage("\(options.verb) does not take --\(extra)")
        }
        guard options.positionals.count == (verb.takesDevice ? 1 : 0) else {
            throw .usage(
                verb.takesDevice
                    ? "\(options.verb) takes one device (ID@SYNCTHING-ID)" : "\(options.verb) takes no arguments")
        }
        return options
    }
}

/// A device as the user passes it between machines: the Arca device id (64 hex digits), `@`,
/// and the Syncthing device id of the same machine. `join` and `status` print it.
public struct DeviceAddress: Sendable, Equatable, CustomStringConvertible {
    /// The Arca device id, lowercase hex.
    public var arca: String
    /// The Syncthing device id (as Syncthing prints it).
    public var syncthing: String

    public init(arca: String, syncthing: String) {
        self.arca = arca
        self.syncthing = syncthing
    }

    /// Parses `HEX@SYNCTHING-ID`; the Arca id may be given in upper case.
    public init(parsing text: String) throws(SyncAgentError) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, SyncFolder.isDeviceName(parts[0].lowercased()),
            parts[1].count >= 52, parts[1].allSatisfy({ $0 == "-" || ($0.isASCII && ($0.isUppercase || $0.isNumber)) })
        else { throw .usage("a device is ID@SYNCTHING-ID (as `arca sync join` and `arca sync status` print it)") }
        arca = parts[0].lowercased()
        syncthing = parts[1]
    }

    public var description: String { arca + "@" + syncthing }
}
