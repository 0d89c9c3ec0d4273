/// A verb that hands over (git-style) to a companion program, so this static CLI stays
/// free of network and D-Bus code: `arca fleet ...` runs arca-fleetd, `arca import --from
/// secret-service ...` runs `arca-secretd --import`, `arca sync join ...` runs arca-sync. stdin is inherited, so a secret
/// piped to `arca fleet put` goes straight to the companion and never touches argv or
/// the environment.
struct HandOver {
    /// The verb that hands over.
    let verb: String
    /// The program it runs.
    let program: String
    /// Words put before the arguments that follow the verb.
    let leadingArguments: [String]
    /// The program's own option for arcad's socket, which carries a `--socket PATH` given
    /// to `arca` before the verb; nil: the program takes no socket (arca keeps such a line).
    let socketOption: String?
    /// Whether the arguments after the verb are this hand-over's (else `arca` parses them).
    let claims: @Sendable ([String]) -> Bool

    /// `arca fleet ...` → `arca-fleetd ...` (whose socket is in fleet.conf).
    static let fleet = HandOver(verb: "fleet", program: "arca-fleetd", leadingArguments: [], socketOption: nil) {
        _ in true
    }

    /// `arca import --from secret-service ...` → `arca-secretd --import --from secret-service ...`.
    /// Any other `--from` stays with `arca` (which gives the usage error).
    static let secretServiceImport = HandOver(
        verb: "import", program: "arca-secretd", leadingArguments: ["--import"], socketOption: "--socket"
    ) { arguments in
        for (i, word) in arguments.enumerated() {
            if word == "--" { return false }
            if word == "--from=" + secretServiceSource { return true }
            if word == "--from", i + 1 < arguments.count { return arguments[i + 1] == secretServiceSource }
        }
        return false
    }

    /// `arca sync join|approve|remove|status|run|recover ...` → `arca-sync ...` (the per-user agent and its
    /// verbs, with Syncthing's REST client); `arca sync init` stays with `arca`.
    static let sync = HandOver(
        verb: "sync", program: "arca-sync", leadingArguments: [], socketOption: "--socket"
    ) { arguments in
        arguments.first.map(syncVerbs.contains) ?? false
    }

    /// The sync verbs arca-sync runs.
    static let syncVerbs: Set<String> = ["join", "approve", "remove", "status", "run", "recover"]

    /// The `--from` value that names the running Secret Service provider.
    static let secretServiceSource = "secret-service"

    /// Every hand-over, tried in order.
    static let all = [fleet, secretServiceImport, sync]

    /// The hand-over for a command line (program name dropped), if any, and the
    /// arguments its program gets. A `--socket PATH` (or `--socket=PATH`) before the
    /// verb, as `arca` itself accepts it, goes to the program's socket option ahead of
    /// the words after the verb, so that a socket given after the verb still wins.
    static func matching(_ arguments: [String]) -> (handOver: HandOver, arguments: [String])? {
        var words = arguments[...]
        var socket: String?
        while let word = words.first, word.hasPrefix("-") {
            if word == "--socket", words.count > 1 {
                socket = words[words.startIndex + 1]
                words.removeFirst(2)
            } else if word.hasPrefix("--socket=") {
                socket = String(word.dropFirst("--socket=".count))
                words.removeFirst()
            } else {
                return nil  // --help, --version, or a usage error: arca's own
            }
        }
        guard let first = words.popFirst() else { return nil }
        let rest = Array(words)
        guard let handOver = all.first(where: { $0.verb == first && $0.claims(rest) }) else { return nil }
        guard let socket else { return (handOver, handOver.leadingArguments + rest) }
        guard let option = handOver.socketOption else { return nil }
        return (handOver, handOver.leadingArguments + [option, socket] + rest)
    }

    /// Where the program is looked for: next to this `arca` (a build directory), then in
    /// the bin and sbin directories of the same prefix (`PREFIX/bin/arca` → `PREFIX/sbin/arca-fleetd`).
    func candidates(executablePath: String) -> [String] {
        let directory = executablePath.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        let parent = directory.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        return [
            directory + "/" + program, parent + "/sbin/" + program, "/usr/local/bin/" + program,
            "/usr/local/sbin/" + program, "/usr/bin/" + program, "/usr/sbin/" + program,
        ]
    }

    /// Replaces this process with the program, given `arguments` (from `matching`);
    /// returns only if that failed, with the exit status.
    func run(_ arguments: [String], output: inout Output) -> Int32 {
        let executable = Exec.currentExecutablePath()
        guard let path = candidates(executablePath: executable).first(where: Exec.isExecutable) else {
            output.errorLine("arca: \(verb): \(program) is not installed (looked next to arca, in bin and in sbin)")
            return ExitCode.error.rawValue
        }
        let reason = Exec.replaceProcess(path: path, arguments: [program] + arguments)
        output.errorLine("arca: \(verb): cannot run \(path): \(reason)")
        return ExitCode.error.rawValue
    }
}
