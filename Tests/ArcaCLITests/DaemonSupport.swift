import Foundation
import Testing

/// The suites that start arcad run one at a time: arcad installs rings in the
/// owner's user keyring, and two daemons must not take turns replacing them.
@Suite(.serialized) enum DaemonTests {}

/// An arcad started for one test: a temporary state directory and socket, and a
/// throwaway user who owns the vault (root's own keyring is shared with every
/// other suite and session on the machine). `stop()` locks every vault, so no
/// key stays in the kernel, kills arcad and removes the user.
final class TestArcad {
    let directory: String
    let socket: String
    let process = Process()
    let owner: TestUser

    init() throws {
        try #require(getuid() == 0, "the arca daemon tests must run as root (they start arcad and create users)")
        owner = try TestUser.create()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("arca-cli-\(UUID().uuidString)").path
        // 0755 so that a throwaway user can reach the socket inside.
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        socket = directory + "/arcad.sock"
        process.executableURL = URL(fileURLWithPath: arcadPath)
        process.arguments = ["--foreground", "--state-dir", directory + "/state", "--socket", socket]
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for _ in 0..<100 {
            if try asRoot(["status"]).status != 69 { return }
            usleep(50_000)
        }
        Issue.record("arcad did not start listening on \(socket)")
    }

    /// Runs `arca` as the owner against this daemon.
    func arca(_ arguments: [String], stdin: String = "") throws -> Run {
        try arca(as: owner, arguments, stdin: stdin)
    }

    /// Runs `arca` as root against this daemon.
    func asRoot(_ arguments: [String], stdin: String = "") throws -> Run {
        try ArcaCLITests.arca(arguments, stdin: stdin, environment: ["ARCA_SOCKET": socket])
    }

    /// Runs `arca` as `user` against this daemon.
    func arca(as user: TestUser, _ arguments: [String], stdin: String = "") throws -> Run {
        try run(user.command([arcaPath] + arguments), stdin: stdin, environment: ["ARCA_SOCKET": socket])
    }

    func stop() {
        _ = try? asRoot(["lock", "--all"])
        // SIGKILL, not SIGTERM: a child spawned by the test runner inherits its blocked
        // signal mask, so arcad would never see SIGTERM. Every vault was locked above.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
        owner.remove()
    }
}

/// A throwaway account (useradd), removed by `remove()`.
struct TestUser {
    var name: String
    var uid: UInt32
    var gid: UInt32

    /// `argv` run as this user: real and effective ids, no groups.
    func command(_ argv: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + argv
    }

    static func create() throws -> TestUser {
        let name = "arcacli" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        // Other suites may hold the /etc/passwd lock a moment (useradd exits 1 or 10): retry.
        var made = try run(["/usr/sbin/useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name])
        for _ in 0..<30 where made.status == 1 || made.status == 10 {
            usleep(100_000)
            made = try run(["/usr/sbin/useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name])
        }
        try #require(made.status == 0, "useradd failed: \(made.stderr)")
        let uid = try run(["/usr/bin/id", "-u", name]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let gid = try run(["/usr/bin/id", "-g", name]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return TestUser(name: name, uid: try #require(UInt32(uid)), gid: try #require(UInt32(gid)))
    }

    func remove() {
        for _ in 0..<30 {
            guard let result = try? run(["/usr/sbin/userdel", "-f", name]), [1, 10].contains(result.status) else {
                return
            }
            usleep(100_000)
        }
    }
}

/// Replaces what changes from run to run (dates, key ids, recovery keys) with placeholders.
func normalized(_ text: String, uid: UInt32? = nil) -> String {
    var text = text
    if let uid { text = text.replacingOccurrences(of: #"\b\#(uid)\b"#, with: "<uid>", options: .regularExpression) }
    let patterns: [(String, String)] = [
        (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, "<date>"),
        (#"(?m)^ *\d+ "#, "<id> "),
        (#"(?m)^[0-9A-Z]{4}(-[0-9A-Z]{2,4})+$"#, "<recovery key>"),
    ]
    for (pattern, replacement) in patterns {
        text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
    }
    return text
}
