// Shared by the root-level test suites: running commands, throwaway users, and
// finding the executables SwiftPM built next to the test bundle.
import Foundation

/// What a command printed and how it ended.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
}

/// Runs `argv` (looked up on PATH) with optional stdin; output trimmed.
@discardableResult
public func run(_ argv: [String], stdin: String? = nil) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = argv
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.run()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus,
        stdout: String(decoding: stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
        stderr: String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}

/// An executable SwiftPM built beside the test bundle (`.build/<config>/NAME`).
public func builtExecutable(_ name: String) -> String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = dir.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    return name
}

/// A user created for one test and removed after it.
public struct TestUser: Sendable {
    public var name: String
    public var uid: UInt32
    public var gid: UInt32

    /// A user by name and ids (for one made outside `withThrowawayUsers`).
    public init(name: String, uid: UInt32, gid: UInt32) {
        self.name = name
        self.uid = uid
        self.gid = gid
    }

    /// Starts a process of this user that sends SIGSTOP, in a loop, to every process
    /// the user may signal (as an attacker would to a helper running with their uid).
    /// `stopSignalling` ends it and resumes what it stopped.
    public func startStoppingEverything() throws -> Process {
        let stopper = Process()
        stopper.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        stopper.arguments = Array(command(["sh", "-c", "while :; do kill -STOP -1 2>/dev/null; done"]).dropFirst())
        try stopper.run()
        return stopper
    }

    /// Ends a `startStoppingEverything` process (once; later calls do nothing) and sends
    /// SIGCONT to the user's processes.
    public func stopSignalling(_ stopper: Process) {
        guard stopper.isRunning else { return }
        kill(stopper.processIdentifier, SIGKILL)
        stopper.waitUntilExit()
        _ = try? ArcaTestSupport.run(["pkill", "-CONT", "-u", "\(uid)"])
    }

    /// `argv` run as this user (real and effective ids, no supplementary groups). The
    /// path is absolute so that runners which exec `argv[0]` directly (the CLI's) work too.
    public func command(_ argv: [String]) -> [String] {
        ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + argv
    }

    /// Runs `argv` as this user.
    @discardableResult
    public func run(_ argv: [String], stdin: String? = nil) throws -> CommandResult {
        try ArcaTestSupport.run(command(argv), stdin: stdin)
    }
}

extension TestUser {
    /// Creates the account `name` (useradd: no home directory, no group of its own, no
    /// login shell); remove it with ``remove()``. `farUid` gives it a random uid far
    /// above useradd's range (see ``withThrowawayUsers(_:prefix:farUids:cleanup:_:)``).
    public static func create(name: String, farUid: Bool = false) throws -> TestUser {
        guard getuid() == 0 else { throw TestSupportError("this test must run as root (it creates users)") }
        func add() throws -> CommandResult {
            let uid = farUid ? ["-u", "\(UInt32.random(in: 5_000_000..<9_000_000))"] : []
            return try ArcaTestSupport.run(["useradd", "-M", "-N"] + uid + ["-s", "/usr/sbin/nologin", name])
        }
        var made = try add()
        // 1 and 10: /etc/passwd or /etc/group is locked by another suite; 4: the uid is taken.
        for _ in 0..<30 where [1, 4, 10].contains(made.status) {
            usleep(100_000)
            made = try add()
        }
        guard made.status == 0 else { throw TestSupportError("useradd \(name) failed: \(made.stderr)") }
        guard let uid = UInt32(try ArcaTestSupport.run(["id", "-u", name]).stdout),
            let gid = UInt32(try ArcaTestSupport.run(["id", "-g", name]).stdout)
        else { throw TestSupportError("id \(name) failed") }
        return TestUser(name: name, uid: uid, gid: gid)
    }

    /// Creates an account named `prefix` and a random tag (``create(name:farUid:)``).
    public static func create(prefix: String) throws -> TestUser {
        try create(name: prefix + String(UInt32.random(in: 0..<UInt32.max), radix: 36))
    }

    /// Invalidates the kernel keys the account owns: its `@u` and `@us` would otherwise
    /// stay until reboot, and every key the kernel holds lengthens each pass of its
    /// garbage collector (bench/pam's close_session measured it).
    public func dropKernelKeys() {
        let script =
            "for s in $(awk -v u=\(uid) '$6 == u { print $1 }' /proc/keys); do "
            + "keyctl invalidate $(printf %d 0x$s) 2>/dev/null; done; true"
        _ = try? run(["sh", "-c", script])
        // Until the kernel's collector has run, a new account given this uid could not
        // get an @u of its own: wait for the uid to hold no key (at most 2 s).
        for _ in 0..<200 {
            let users = (try? String(contentsOfFile: "/proc/key-users", encoding: .utf8)) ?? ""
            let held = users.split(separator: "\n").contains {
                $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) == String(uid)
            }
            if !held { return }
            usleep(10_000)
        }
    }

    /// Deletes the account (after `dropKernelKeys`), retrying while another suite holds
    /// the lock of /etc/passwd or /etc/group (userdel exits 1 or 10).
    public func remove() {
        dropKernelKeys()
        for _ in 0..<30 {
            guard let result = try? ArcaTestSupport.run(["userdel", "-f", name]), [1, 10].contains(result.status)
            else { return }
            usleep(100_000)
        }
    }
}

public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Creates `count` throwaway users, runs `body`, and removes them (also on failure).
/// `cleanup` runs first for each user (purge their keys, …). `farUids` gives them
/// random uids far above useradd's range, for a test that deletes its user while
/// arcad runs: suites run in parallel, and with useradd's next free uid another
/// suite's new user could take that uid at once and have its keyrings purged.
/// Only such tests should ask: every uid that ever had a keyring stays listed in
/// /proc/key-users until reboot.
public func withThrowawayUsers(
    _ count: Int, prefix: String = "arcat", farUids: Bool = false, cleanup: (TestUser) -> Void = { _ in },
    _ body: ([TestUser]) throws -> Void
) throws {
    let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    var users: [TestUser] = []
    defer {
        for user in users {
            cleanup(user)
            user.remove()
        }
    }
    for index in 0..<count {
        users.append(try TestUser.create(name: "\(prefix)\(tag)\(index)", farUid: farUids))
    }
    try body(users)
}

/// Removes what an arcad over `stateDirectory` parked in root's user keyring: the ring
/// `arcad:parked:<tag>`, `<tag>` being the first 6 bytes of the BLAKE2b-128 of the
/// path (`KeyParking`). A test's arcad never comes back, and root's `@u` is shared by
/// every arcad on the machine: left there, each ring slows every later root keyring
/// search. Invalidating the ring destroys the parked keys it alone links.
public func removeParkedKeys(stateDirectory: String) {
    _ = try? run([
        "sh", "-c",
        "tag=$(printf %s \"$1\" | b2sum -l 128 | cut -c1-12) && "
            + "keyctl search @u keyring \"arcad:parked:$tag\" 2>/dev/null | xargs -r keyctl invalidate",
        "sh", stateDirectory,
    ])
}
