#if canImport(Glibc)
import Glibc
#endif

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
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let executable =
            length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        guard let path = candidates(executablePath: executable).first(where: { access($0, X_OK) == 0 }) else {
            output.errorLine("arca: fleet: \(program) is not installed (looked next to arca and in sbin)")
            return ExitCode.error.rawValue
        }
        let words = [program] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) }
        argv.append(nil)
        execv(path, argv)
        let reason = String(cString: strerror(errno))
        for pointer in argv { free(pointer) }
        output.errorLine("arca: fleet: cannot run \(path): \(reason)")
        return ExitCode.error.rawValue
    }
}
