import ArcaCrypto
import Foundation
import Testing

@testable import ArcaKeyring

/// Fails loudly (never skips) when the tests cannot run: they need root and a
/// kernel with key management.
func requireRootAndKeyring() throws {
    try #require(getuid() == 0, "the keyring tests must run as root (they create users and root-owned keys)")
    let hasKeyring: Bool
    do {
        _ = try KeySerial.threadKeyring.resolve(create: true)
        hasKeyring = true
    } catch {
        hasKeyring = false
    }
    try #require(hasKeyring, "this kernel has no keyring support")
}

/// The output of a finished command.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `argv` and waits for it.
@discardableResult
func run(_ argv: [String]) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = argv
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus,
        stdout: String(decoding: stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
        stderr: String(decoding: stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
}

/// The probe executable built next to the test bundle.
let probePath: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("arca-keyring-probe").path
}()

/// A throwaway account, created with useradd and removed with userdel.
struct TestUser {
    var name: String
    var uid: UInt32
    var gid: UInt32

    /// `argv` run with this user's real and effective uid and gid, no groups,
    /// inheriting the test process's keyrings (none but the thread keyring).
    func command(_ argv: [String]) -> [String] {
        ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] + argv
    }

    /// Runs the probe as this user and returns its one line.
    func probe(_ args: String...) throws -> String {
        let result = try run(command([probePath] + args))
        return result.stdout
    }
}

/// Creates two throwaway users, runs `body`, then removes the users and every
/// key Arca made for them, also when `body` throws.
func withTwoUsers(_ body: (TestUser, TestUser) throws -> Void) throws {
    try requireRootAndKeyring()
    let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    var users: [TestUser] = []
    defer {
        for user in users {
            try? KeyringLayout().purge(user: user.uid)
            for _ in 0..<20 {
                // 1 and 10: /etc/passwd or /etc/group is locked by someone else.
                guard let result = try? run(["userdel", "-f", user.name]), [1, 10].contains(result.status) else {
                    break
                }
                usleep(100_000)
            }
        }
    }
    for suffix in ["a", "b"] {
        let name = "arcakt\(tag)\(suffix)"
        // Other suites may hold the /etc/passwd or /etc/group lock for a moment
        // (useradd exits 1 or 10 then): retry.
        var made = try run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name])
        for _ in 0..<20 where made.status == 1 || made.status == 10 {
            usleep(100_000)
            made = try run(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", name])
        }
        try #require(made.status == 0, "useradd failed: \(made.stderr)")
        let uid = try run(["id", "-u", name]).stdout
        let gid = try run(["id", "-g", name]).stdout
        let user = TestUser(name: name, uid: try #require(UInt32(uid)), gid: try #require(UInt32(gid)))
        users.append(user)
    }
    try body(users[0], users[1])
}

/// An item with a deterministic secret (`secret-<account>`), so a reader can check it.
func testItem(service: String, account: String) throws -> KeyringItem {
    let key = KeyringItemKey.genericPassword(GenericPasswordKey(service: service, account: account))
    return KeyringItem(key: key, secret: try secret("secret-\(account)"))
}

func secret(_ text: String) throws -> SecretBytes {
    var bytes = Array(text.utf8)
    return try SecretBytes(consuming: &bytes)
}

/// Lower-case hex, as the probe prints secrets.
func hex(_ text: String) -> String {
    text.utf8.map { String(format: "%02x", $0) }.joined()
}

/// The serials present in /proc/keys (as root sees them).
func procKeysSerials() throws -> Set<Int32> {
    // procfs files have size 0: read them to EOF, not by their stat size.
    let text = try #require(ProcFile.read("/proc/keys"))
    var serials = Set<Int32>()
    for line in text.split(separator: "\n") {
        if let word = line.split(separator: " ").first, let value = UInt32(word, radix: 16) {
            serials.insert(Int32(bitPattern: value))
        }
    }
    return serials
}
