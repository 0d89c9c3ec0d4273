import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation

// The pieces of the logind end-to-end tests: a private system-like bus, the
// fake logind on it (Tests/integration/fake-logind.py), and the real arcad
// binary pointed at the bus through DBUS_SYSTEM_BUS_ADDRESS.

let logindTestsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
let keyringPollerScript = logindTestsDirectory.deletingLastPathComponent()
    .appendingPathComponent("integration/keyring-poller.py").path
let fakeLogindScript = logindTestsDirectory.deletingLastPathComponent()
    .appendingPathComponent("integration/fake-logind.py").path

/// Reads lines from a pipe, one byte at a time (the lines are short).
final class LineReader {
    private let handle: FileHandle
    init(_ handle: FileHandle) { self.handle = handle }

    func line() -> String? {
        var bytes: [UInt8] = []
        while true {
            guard let data = try? handle.read(upToCount: 1), let byte = data.first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
    }
}

/// A private dbus-daemon with a system-bus-like configuration that allows everything.
final class PrivateBus {
    let directory: String
    let address: String
    private let process: Process

    init(directory: String) throws {
        self.directory = directory
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(directory)/system_bus_socket</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(directory)/bus.conf", "--print-address", "--nofork"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        guard let line = LineReader(out.fileHandleForReading).line(), line.hasPrefix("unix:") else {
            process.terminate()
            throw TestSupportError("dbus-daemon printed no address")
        }
        address = line
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        reap(process)
    }
}

/// The fake logind, driven through its stdin.
final class FakeLogind {
    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    /// Starts it with initial sessions (`ID:UID[:locked]`) and waits until it owns its name.
    init(bus: PrivateBus, sessions: [String] = []) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [fakeLogindScript] + sessions
        process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/bin:/bin"]
        let inPipe = Pipe()
        let outPipe = Pipe()
        process.standardInput = inPipe
        process.standardOutput = outPipe
        try process.run()
        input = inPipe.fileHandleForWriting
        output = LineReader(outPipe.fileHandleForReading)
        guard output.line() == "ready" else { throw TestSupportError("the fake logind did not start") }
    }

    /// Sends one command; returns CLOCK_MONOTONIC (ns) right after the signal went out.
    @discardableResult
    func send(_ command: String) throws -> UInt64 {
        try input.write(contentsOf: Data((command + "\n").utf8))
        guard let reply = output.line(), reply.hasPrefix("ok "), let ns = UInt64(reply.dropFirst(3)) else {
            throw TestSupportError("fake logind: '\(command)' failed")
        }
        return ns
    }

    /// Sends a command that answers a line of its own (`inhibitors`, `wait-release`); returns that line.
    func answer(_ command: String) throws -> String {
        try input.write(contentsOf: Data((command + "\n").utf8))
        guard let reply = output.line() else { throw TestSupportError("fake logind: '\(command)' failed") }
        return reply
    }

    /// Inhibitors arcad holds now.
    func inhibitors() throws -> Int {
        let reply = try answer("inhibitors")
        guard reply.hasPrefix("ok "), let n = Int(reply.dropFirst(3)) else {
            throw TestSupportError("fake logind: inhibitors: \(reply)")
        }
        return n
    }

    /// Waits until arcad holds no inhibitor. Returns what the double saw the
    /// moment the last one closed: the watched key "live" or "gone" ("unwatched").
    @discardableResult
    func waitRelease() throws -> String {
        let words = try answer("wait-release").split(separator: " ")
        guard words.count == 3, words[0] == "ok" else { throw TestSupportError("fake logind: wait-release failed") }
        return String(words[2])
    }

    /// logind leaves the bus.
    func quit() {
        _ = try? send("quit")
        try? input.close()
        reap(process)
    }
}

/// Tests/integration/keyring-poller.py run as the user: watches one item key
/// from the user's side and reports when it stops being readable.
final class KeyringPoller {
    private let process: Process
    private let input: FileHandle
    private let output: LineReader

    init(user: TestUser) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = user.command(["/usr/bin/python3", keyringPollerScript])
        let inPipe = Pipe()
        let outPipe = Pipe()
        process.standardInput = inPipe
        process.standardOutput = outPipe
        try process.run()
        input = inPipe.fileHandleForWriting
        output = LineReader(outPipe.fileHandleForReading)
        guard output.line() == "ready" else { throw TestSupportError("the keyring poller did not start") }
    }

    /// Finds the live key; false if there is none.
    func arm(_ description: String) throws -> Bool {
        try input.write(contentsOf: Data("arm \(description)\n".utf8))
        return output.line()?.hasPrefix("armed ") == true
    }

    /// Keys linked in the user's ring `ring` (`arca:wu`), as the user sees them; -1 without the ring.
    func count(_ ring: String) throws -> Int {
        try input.write(contentsOf: Data("count \(ring)\n".utf8))
        guard let line = output.line(), line.hasPrefix("count "), let n = Int(line.dropFirst(6)) else {
            throw TestSupportError("the keyring poller failed")
        }
        return n
    }

    func startWaiting() throws { try input.write(contentsOf: Data("wait\n".utf8)) }

    /// CLOCK_MONOTONIC (ns) of the first poll that found the key unreadable.
    func gone() throws -> UInt64 {
        guard let line = output.line(), line.hasPrefix("gone "), let ns = UInt64(line.dropFirst(5)) else {
            throw TestSupportError("the keyring poller failed")
        }
        return ns
    }

    func stop() {
        try? input.close()
        reap(process)
    }
}

/// The real arcad on the private bus, with its debug log: the shared launcher and
/// what the logind tests read from it.
extension ArcadProcess {
    /// arcad with `config`, its system bus at `busAddress`, logging with `--verbose`.
    convenience init(busAddress: String, config: String) throws {
        try self.init(
            prefix: "arca-logind", config: config, verbose: true,
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": busAddress])
    }

    /// Lines of arcad's log containing `text`.
    func logLines(containing text: String) -> [String] {
        log().split(separator: "\n").map(String.init).filter { $0.contains(text) }
    }

    /// VmRSS in KiB.
    func residentKiB() -> Int {
        guard let pid = process?.processIdentifier,
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// Whether the user's whenUnlocked class is loaded, as arcad reports it.
    func whenUnlockedLoaded(_ uid: UInt32) throws -> Bool {
        guard case .status(let status) = try send(.status(uid: uid)) else { throw TestSupportError("no status") }
        return status.unlocked.contains(.whenUnlocked)
    }
}

/// A cgroup named as logind names a session's (`…/session-ID.scope`), so that
/// `sd_pid_get_session` of a process moved into it answers ID: on the unified
/// hierarchy, `/sys/fs/cgroup/unified` on a hybrid machine. Root only.
final class LogindScope {
    let slice: String
    let directory: String

    init(sessionID: String) throws {
        let root =
            FileManager.default.fileExists(atPath: "/sys/fs/cgroup/unified/cgroup.procs")
            ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup"
        guard FileManager.default.fileExists(atPath: root + "/cgroup.procs") else {
            throw TestSupportError("no cgroup2 hierarchy at \(root): cannot make a logind-like session scope")
        }
        slice = root + "/arca-test-\(sessionID).slice"
        directory = slice + "/session-\(sessionID).scope"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Removes the cgroups (their processes must have exited).
    func remove() {
        for _ in 0..<100 where rmdir(directory) != 0 && errno == EBUSY { usleep(20_000) }
        rmdir(slice)
    }
}

/// One test's world: temporary directory, bus, fake logind, arcad, one enrolled user.
final class LogindWorld {
    let directory: String
    let bus: PrivateBus
    var logind: FakeLogind?
    let arcad: ArcadProcess
    let user: TestUser
    let key: [UInt8]
    /// Unique service names, so that this test's keys are told apart in /proc/keys.
    let tag = "lgd" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)

    init(user: TestUser, config: String, sessions: [String]) throws {
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("arca-logind-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        bus = try PrivateBus(directory: directory)
        logind = try FakeLogind(bus: bus, sessions: sessions)
        arcad = try ArcadProcess(busAddress: bus.address, config: config)
        self.user = user
        key = try logindDerive("correct horse")
        guard try arcad.send(.enroll(uid: user.uid, key: key, parameters: logindParameters)) == .ok else {
            throw TestSupportError("enroll failed")
        }
        for (account, accessible) in [("wu", Accessibility.whenUnlocked), ("afu", .afterFirstUnlock)] {
            let add = Request.add(
                AddRequest(
                    vault: .user(uid: user.uid), itemClass: .genericPassword,
                    attributes: [
                        .service: .string(tag), .account: .string(account), .accessible: .accessibility(accessible),
                    ],
                    secret: Array("secret-\(account)".utf8)))
            guard try arcad.send(add) == .items([]) else { throw TestSupportError("add failed") }
        }
    }

    var wuDescription: String { "arca:genp:\(tag):wu" }
    var afuDescription: String { "arca:genp:\(tag):afu" }

    /// What the user reads from the kernel: the secret, or the error name.
    func kernel(_ description: String) throws -> String {
        let out = try user.run([builtExecutable("arca-keyring-probe"), "read", "pam", description]).stdout
        guard out.hasPrefix("ok ") else { return out.hasPrefix("error ") ? "gone" : out }
        let hex = Array(out.dropFirst(3))
        var bytes: [UInt8] = []
        var i = 0
        while i + 1 < hex.count {
            bytes.append(UInt8(String(hex[i...(i + 1)]), radix: 16) ?? 0)
            i += 2
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    var whenUnlocked: String { (try? kernel(wuDescription)) ?? "probe failed" }

    /// The user's open sessions, as arcad counts them.
    func sessionCount() throws -> UInt32 {
        guard case .status(let status) = try arcad.send(.status(uid: user.uid)) else {
            throw TestSupportError("no status")
        }
        return status.sessionCount
    }
    var afterFirstUnlock: String { (try? kernel(afuDescription)) ?? "probe failed" }

    /// Waits up to `seconds` for `condition`.
    func eventually(_ seconds: Double = 3, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(5_000)
        }
        return try condition()
    }

    /// The user's screen locker authenticating through pam_arca: an unlock as the user.
    func userUnlocks() throws -> String {
        try user.run(
            [builtExecutable("arcad-probe"), arcad.socket, "unlock-password", "\(user.uid)"],
            stdin: "correct horse\n"
        ).stdout
    }

    /// The same unlock with the derived key, sent by root (cheap, for loops).
    func unlockWithKey() throws -> Reply { try arcad.send(.unlock(uid: user.uid, key: key)) }

    func stop() {
        arcad.stop()
        logind?.quit()
        bus.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

let logindParameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("0123456789abcdef".utf8))

func logindDerive(_ password: String) throws -> [UInt8] {
    let secret = try Array(password.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    let key = try Argon2id.deriveKey(
        password: secret, parameters: KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: logindParameters.salt))
    return key.withUnsafeBytes { Array($0) }
}

/// Waits up to 3 s for `process` to end, then kills it. (Polls instead of
/// `waitUntilExit`, which was seen to hang here after the child had exited.)
func reap(_ process: Process) {
    for _ in 0..<300 where process.isRunning { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
}

/// Lines of /proc/keys (the keys root can see: arcad's are root-owned). Read to the end with
/// FileHandle: String(contentsOfFile:) stops after the first read (one 4 KiB page of this
/// seq_file), which misses every key listed after it once the machine holds a few dozen keys.
func procKeys() -> [String] {
    let data = (try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/keys")).readToEnd()) ?? Data()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// The serial of the live (not invalidated, revoked or dead) key with exactly this description, from /proc/keys.
func serial(of description: String) -> Int32? {
    for line in procKeys() {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 9, fields[8].hasPrefix(description + ":") || fields[8] == description,
            !fields[1].contains("i"), !fields[1].contains("R"), !fields[1].contains("D"),
            let serial = Int32(fields[0], radix: 16), (try? KeySerial(rawValue: serial).describe()) != nil
        else { continue }
        return serial
    }
    return nil
}

/// Runs `body` with a fresh world for one throwaway user; tears everything down after.
func withLogindWorld(config: String = "", sessions: (UInt32) -> [String], _ body: (LogindWorld) throws -> Void) throws {
    try withThrowawayUsers(1, prefix: "arcal", cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
        let world = try LogindWorld(user: users[0], config: config, sessions: sessions(users[0].uid))
        defer { world.stop() }
        try body(world)
    }
}
