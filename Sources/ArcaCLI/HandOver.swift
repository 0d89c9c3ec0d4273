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
    /// Whether the arguments after the verb are this hand-over's (else `arca` parses them).
    let claims: @Sendable ([String]) -> Bool

    /// `arca fleet ...` → `arca-fleetd ...`.
    static let fleet = HandOver(verb: "fleet", program: "arca-fleetd", leadingArguments: []) { _ in true }

    /// `arca import --from secret-service ...` → `arca-secretd --import --from secret-service ...`.
    /// Any other `--from` stays with `arca` (which gives the usage error).
    static let secretServiceImport = HandOver(verb: "import", program: "arca-secretd", leadingArguments: ["--import"]) {
        arguments in
        for (i, word) in arguments.enumerated() {
            if word == "--" { return false }
            if word == "--from=" + secretServiceSource { return true }
            if word == "--from", i + 1 < arguments.count { return arguments[i + 1] == secretServiceSource }
        }
        return false
    }

    /// `arca sync join|approve|remove|status|run ...` → `arca-sync ...` (the per-user agent and its
    /// verbs, with Syncthing's REST client); `arca sync init` stays with `arca`.
    static let sync = HandOver(verb: "sync", program: "arca-sync", leadingArguments: []) { arguments in
        arguments.first.map(syncVerbs.contains) ?? false
    }

    /// The sync verbs arca-sync runs.
    static let syncVerbs: Set<String> = ["join", "approve", "remove", "status", "run"]

    /// The `--from` value that names the running Secret Service provider.
    static let secretServiceSource = "secret-service"

    /// Every hand-over, tried in order.
    static let all = [fleet, secretServiceImport, sync]

    /// The hand-over for a command line (program name dropped), if any.
    static func matching(_ arguments: [String]) -> HandOver? {
        guard let first = arguments.first else { return nil }
        let rest = Array(arguments.dropFirst())
        return all.first { $0.verb == first && $0.claims(rest) }
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

    /// Replaces this process with the program; returns only if that failed, with the exit status.
    func run(_ arguments: [String], output: inout Output) -> Int32 {
        let executable = Exec.currentExecutablePath()
        guard let path = candidates(executablePath: executable).first(where: Exec.isExecutable) else {
            output.errorLine("arca: \(verb): \(program) is not installed (looked next to arca, in bin and in sbin)")
            return ExitCode.error.rawValue
        }
        let reason = Exec.replaceProcess(path: path, arguments: [program] + leadingArguments + arguments)
        output.errorLine("arca: \(verb): cannot run \(path): \(reason)")
        return ExitCode.error.rawValue
    }
}
