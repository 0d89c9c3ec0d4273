import ArcaClient
import ArcaProtocol
import ArcaSystem
import ArcaTestSupport
import Foundation
import Testing

/// A listening socket handed to arcad by a launcher (`LISTEN_FDS`, fd 3) as a launcher
/// other than systemd may hand it: non-blocking, or not listening at all. arcad must not
/// spin on it (its CPU time over an idle second stays near zero).
@Suite("arcad binary: a listener passed by a launcher (root)", .serialized)
struct ArcadListenerTests {
    @Test("a non-blocking listener from a launcher: arcad makes it blocking, idles without spinning, and serves")
    func nonBlockingListener() throws {
        let launched = try LaunchedArcad(listening: true)
        defer { launched.stop() }
        #expect(try launched.waitUntilServing())
        let spent = launched.cpuTicks(overSeconds: 1)
        #expect(spent <= 5, "arcad used \(spent) clock ticks of CPU in an idle second")
        #expect(launched.log().contains("the listening socket was non-blocking: made blocking"))
        let reply = try ArcadClient(path: launched.socketPath, timeoutMilliseconds: 2000).send(.status(uid: nil))
        #expect(reply == emptyRootStatus)
    }

    @Test("a socket whose accept(2) fails each time (EINVAL: not listening): paused retries, logged once")
    func failingAccept() throws {
        let launched = try LaunchedArcad(listening: false)
        defer { launched.stop() }
        // arcad is up once it logs which socket it uses; its accept thread starts right after.
        for _ in 0..<250 where !launched.log().contains("using the socket passed by systemd") { usleep(20_000) }
        usleep(300_000)
        let spent = launched.cpuTicks(overSeconds: 1)
        #expect(spent <= 5, "arcad used \(spent) clock ticks of CPU retrying a failing accept for a second")
        let failures = launched.log().components(separatedBy: "\n").filter { $0.contains("accept: ") }
        #expect(failures.count == 1, "\(failures.count) accept failures logged")
        #expect(failures.first?.contains("accept: Invalid argument; accepting again with pauses of up to 1 s") == true)
    }
}

/// arcad started as a socket-activating launcher starts it: the socket on fd 3,
/// `LISTEN_FDS=1` and `LISTEN_PID` its own pid (set by a shell that then execs arcad).
final class LaunchedArcad: @unchecked Sendable {
    let directory: String
    let socketPath: String
    let pid: pid_t

    init(listening: Bool) throws {
        guard getuid() == 0 else { throw TestSupportError("this test must run as root (it starts arcad)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("arcad-launcher-\(UUID())").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let path = directory + "/arcad.sock"
        socketPath = path
        var listener = try UnixSocket.listen(path: path, mode: 0o666)
        if !listening {
            // A bound socket that never listens: accept(2) fails with EINVAL every time.
            listener.close()
            unlink(path)
            listener = FileDescriptor(rawValue: socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0))
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else { throw TestSupportError("bind \(path): errno \(errno)") }
        }
        try listener.setNonBlocking()
        defer { listener.close() }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 onto 3 clears close-on-exec; a listener that is fd 3 already is moved first.
        let source = listener.rawValue == 3 ? dup(3) : listener.rawValue
        defer { if source != listener.rawValue { close(source) } }
        posix_spawn_file_actions_adddup2(&actions, source, 3)
        let log = directory + "/arcad.log"
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let script = "LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" --foreground --config /dev/null --state-dir \"$1\""
        let arguments = ["/bin/sh", "-c", script, builtExecutable("arcad"), directory + "/state"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, "/bin/sh", &actions, nil, &argv, environ)
        guard rc == 0 else { throw TestSupportError("posix_spawn: \(rc)") }
        pid = child
    }

    /// Waits (at most 5 s) until arcad answers a status request.
    func waitUntilServing() throws -> Bool {
        for _ in 0..<250 {
            if let client = try? ArcadClient(path: socketPath, timeoutMilliseconds: 1000),
                (try? client.send(.status(uid: nil))) != nil
            {
                return true
            }
            usleep(20_000)
        }
        return false
    }

    /// User plus system CPU time arcad spent (clock ticks, 100 a second) over `seconds`.
    func cpuTicks(overSeconds seconds: UInt32) -> Int {
        let before = cpuTicks()
        sleep(seconds)
        return cpuTicks() - before
    }

    private func cpuTicks() -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // Fields after "(comm)": state is 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    func log() -> String { (try? String(contentsOfFile: directory + "/arcad.log", encoding: .utf8)) ?? "" }

    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        removeParkedKeys(stateDirectory: directory + "/state")
        try? FileManager.default.removeItem(atPath: directory)
    }
}
