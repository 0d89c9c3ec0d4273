import ArcaDaemon
import ArcaKeyring
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

let usage = "usage: arcad [--foreground] [--verbose] [--config FILE] [--state-dir DIR] [--socket PATH]"
let help = """
    arcad — the Arca credential store daemon

    \(usage)

    Options:
      --foreground        stay attached and log to stderr (systemd runs it this way)
      --verbose           log debug messages too
      --config FILE       configuration file (default \(DaemonConfig.defaultPath); see arca.conf(5))
      --state-dir DIR     vaults and host key (default \(DaemonConfig().stateDirectory))
      --socket PATH       request socket (default \(DaemonConfig().socketPath))
      --version           print the version and exit
      --help              print this help and exit

    See arcad(8).
    """

func fail(_ message: String, code: Int32 = 1) -> Never {
    try? FileDescriptor.standardError.writeAll("arcad: \(message)\n")
    if code == 2 { try? FileDescriptor.standardError.writeAll("\(usage)\n") }
    exit(code)
}

struct Options {
    var foreground = false
    var verbose = false
    var configPath: String?
    var stateDirectory: String?
    var socketPath: String?
}

func parse(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func value(_ flag: String, _ inline: String?) -> String {
        if let inline { return inline }
        guard let next = rest.popFirst(), !next.isEmpty else { fail("error: \(flag) needs a value", code: 2) }
        return next
    }
    while let argument = rest.popFirst() {
        let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
        let flag = parts[0]
        let inline = parts.count == 2 ? parts[1] : nil
        switch flag {
        case "--foreground", "-f": options.foreground = true
        case "--verbose", "-v": options.verbose = true
        case "--config": options.configPath = value(flag, inline)
        case "--state-dir": options.stateDirectory = value(flag, inline)
        case "--socket": options.socketPath = value(flag, inline)
        case "--version":
            print(Daemon.versionLine)
            exit(0)
        case "--help", "-h":
            print(help)
            exit(0)
        default: fail("error: unknown option '\(argument)'", code: 2)
        }
    }
    return options
}

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var text = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        text += buffer[0..<n]
    }
    return String(decoding: text, as: UTF8.self)
}

let options = parse(Array(CommandLine.arguments.dropFirst()))
guard geteuid() == 0 else { fail("must run as root (it acts on every user's kernel keyring)") }

var config = DaemonConfig()
let configPath = options.configPath ?? DaemonConfig.defaultPath
if let text = readFile(configPath) {
    do { config = try DaemonConfig.parse(text, file: configPath) } catch { fail("\(error)") }
} else if options.configPath != nil {
    fail("\(configPath): \(String(cString: strerror(errno)))")
}
// Staged backups are held in memory: caps past half of it are refused here, not found out later.
do {
    try config.checkBackupStaging(file: configPath)
} catch { fail("\(error)") }
if let dir = options.stateDirectory { config.stateDirectory = dir }
if let path = options.socketPath { config.socketPath = path }

Log.configure(foreground: options.foreground, verbose: options.verbose)
// A parent may have left signals blocked (Foundation's Process does): arcad must
// still stop on SIGTERM. Then ignore SIGPIPE: a vanished client is not fatal.
var none = sigset_t()
sigemptyset(&none)
sigprocmask(SIG_SETMASK, &none, nil)
signal(SIGTERM, SIG_DFL)
signal(SIGINT, SIG_DFL)
signal(SIGPIPE, SIG_IGN)
umask(0o077)

// First of all, the state directory is checked and locked: a second arcad on it
// stops here, before it restores parked keys or unlinks the first one's socket.
let stateLock: StateLock
do {
    stateLock = try DaemonProcess.claimStateDirectory(config.stateDirectory)
} catch {
    fail("cannot start: \(error.message)")
}

// arcad's own private session keyring: nothing it handles may percolate into a
// keyring that another process inherits (systemd's KeyringMode=private does the
// same; this covers arcad started by hand or by a test).
let privateSession = DaemonProcess.isolateKeyrings()

// Detach before anything secret is allocated: locked memory does not survive fork.
let readiness: Int32? = options.foreground ? nil : DaemonProcess.detach()
if readiness != nil { stateLock.recordOwner() }
let daemon: Daemon
let server: Server
let credentials: CredentialServer
do {
    // Its hold on users' @u lives in that private session keyring (KeyringLayout); in a
    // session keyring it shares with others, none (every ring through the uid-switch child).
    let kernel = KernelKeyring(
        budget: config.kernelBudget, stateDirectory: config.stateDirectory,
        anchorIn: privateSession ? .sessionKeyring : nil)
    daemon = try Daemon(config: config, kernel: kernel, publishesParameters: true)
    daemon.restoreParkedKeys()
    // A user deleted while arcad was down: clear their keyrings now, not in a minute.
    daemon.purgeDeletedUsers()
    // An arcad restart re-grants everything in system.db.
    daemon.deliverSystemGrants()
    server = try Server(config: config, handler: daemon)
    credentials = try CredentialServer(config: config, daemon: daemon)
} catch let error as HandlerError {
    fail("cannot start: \(error.message)")
} catch {
    fail("cannot start: \(error)")
}
if let readiness { DaemonProcess.ready(readiness) }
if config.idleTimeout > 0 {
    DaemonProcess.every(seconds: max(1, min(60, config.idleTimeout / 4))) { daemon.expireIdleUsers() }
}
credentials.start()
// Persistent keyrings expire when untouched (persistent_keyring_expiry, 3 days by
// default): refresh the granted uids' well inside that.
DaemonProcess.every(seconds: Daemon.systemRefreshInterval()) { daemon.refreshSystemGrants() }
LogindWatcher.start(daemon: daemon, config: config)
// A session whose PAM application died (SIGKILL) ends within a second.
daemon.startSessionReaper()
// A deleted account's @u outlives it; a recycled uid must not inherit it.
DaemonProcess.every(seconds: 60) { daemon.purgeDeletedUsers() }
Log.notice("\(Daemon.versionLine) started (state \(config.stateDirectory))")
server.run()
