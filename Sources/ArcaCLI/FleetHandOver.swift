/// `arca fleet ...` hands over to `arca-fleetd` (git-style), so this static CLI stays free
/// of network code: the same arguments, and stdin inherited, so a secret piped to
/// `arca fleet put` goes straight to arca-fleetd and never touches argv or the environment.
enum FleetHandOver {
    /// The verb that hands over.
    static let verb = "fleet"
    /// The program it runs.
    static let program = "arca-fleetd"

    /// Where arca-fleetd is looked for: next to this `arca` (a build directory), then in
    /// the sbin directory of the same prefix (`PREFIX/bin/arca` → `PREFIX/sbin/arca-fleetd`).
    static func candidates(executablePath: String) -> [String] {
        let directory = executablePath.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        let parent = directory.split(separator: "/", omittingEmptySubsequences: false).dropLast()
            .joined(separator: "/")
        return [directory + "/" + program, parent + "/sbin/" + program, "/usr/local/sbin/" + program,
                "/usr/sbin/" + program]
    }

    /// Replaces this process with arca-fleetd; returns only if that failed, with the exit status.
    static func run(_ arguments: [String], output: inout Output) -> Int32 {
        let executable = Exec.currentExecutablePath()
        guard let path = candidates(executablePath: executable).first(where: Exec.isExecutable) else {
            output.errorLine("arca: fleet: \(program) is not installed (looked next to arca and in sbin)")
            return ExitCode.error.rawValue
        }
        let reason = Exec.replaceProcess(path: path, arguments: [program] + arguments)
        output.errorLine("arca: fleet: cannot run \(path): \(reason)")
        return ExitCode.error.rawValue
    }
}
