// The one launcher of the real arcad binary for tests (the CLI's golden tests,
// ArcadTests, the logind world, the library's shared daemon all start it here).
import ArcaClient
import ArcaProtocol
import Foundation

/// The real `arcad` binary, started for a test over its own temporary directory:
/// state in `<directory>/state`, socket `<directory>/arcad.sock` (or in a
/// subdirectory arcad has to create), config `<directory>/arca.conf`.
///
/// `stop()` locks every vault (no test secret stays in the kernel), kills arcad,
/// removes what it parked in root's `@u` (``removeParkedKeys(stateDirectory:)``)
/// and deletes the directory. SIGKILL, not SIGTERM: a child spawned by the test
/// runner inherits its blocked signal mask and would never see SIGTERM.
public final class ArcadProcess: @unchecked Sendable {
    // @unchecked: one test owns it; `process` changes only in start/kill9/stop on that test's thread.

    /// The temporary directory holding state, socket, config and log.
    public let directory: String
    /// The request socket.
    public let socket: String
    /// The config file given with `--config`.
    public let configPath: String
    /// arcad's stderr (with `verbose`, its debug log too).
    public let logPath: String
    /// The vaults and host key.
    public var stateDirectory: String { directory + "/state" }
    /// The running process, nil once stopped or killed.
    public private(set) var process: Process?
    private let verbose: Bool
    private let environment: [String: String]?

    /// Creates the directory (0755, so a throwaway user can reach the socket), writes
    /// `config`, and starts arcad. `environment` replaces arcad's (the logind tests aim
    /// it at a private bus); `prefix` names the directory after the suite.
    public init(
        prefix: String = "arcad-test", config: String = "", socketSubdirectory: String? = nil, verbose: Bool = false,
        environment: [String: String]? = nil
    ) throws {
        guard getuid() == 0 else { throw TestSupportError("this test must run as root (it starts arcad)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        socket = directory + (socketSubdirectory.map { "/\($0)" } ?? "") + "/arcad.sock"
        configPath = directory + "/arca.conf"
        logPath = directory + "/arcad.log"
        self.verbose = verbose
        self.environment = environment
        _ = FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8))
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        try start()
    }

    /// Starts arcad (again, after `kill9`) and waits until its socket answers.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: builtExecutable("arcad"))
        p.arguments =
            ["--foreground"] + (verbose ? ["--verbose"] : [])
            + ["--config", configPath, "--state-dir", stateDirectory, "--socket", socket]
        if let environment { p.environment = environment }
        p.standardError = FileHandle(forWritingAtPath: logPath)
        try p.run()
        process = p
        for _ in 0..<250 {
            if let client = try? ArcadClient(path: socket, timeoutMilliseconds: 1000),
                (try? client.send(.status(uid: nil))) != nil
            {
                return
            }
            usleep(20_000)
        }
        throw TestSupportError("arcad did not start listening on \(socket): \(log())")
    }

    /// Sends one request over a new connection.
    public func send(_ request: Request, timeoutMilliseconds: Int = 10_000) throws -> Reply {
        try ArcadClient(path: socket, timeoutMilliseconds: timeoutMilliseconds).send(request)
    }

    /// arcad's stderr so far.
    public func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGKILL, as a crash would; waits (at most 3 s) for the process to end.
    public func kill9() {
        guard let p = process else { return }
        let pid = p.processIdentifier
        kill(pid, SIGKILL)
        // Polls instead of `waitUntilExit`, which was seen to hang after the child had exited;
        // and reaps it itself, since at exit (LiveArcad) Foundation no longer reaps children.
        var status: Int32 = 0
        for _ in 0..<300 where p.isRunning {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || reaped < 0 { break }
            usleep(10_000)
        }
        process = nil
    }

    /// Locks every vault, kills arcad, drops its parked keys and deletes the directory.
    public func stop() {
        if process != nil { _ = try? send(.lockAll) }
        kill9()
        removeParkedKeys(stateDirectory: stateDirectory)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
