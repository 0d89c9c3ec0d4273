// bench-api: the figures of issue 8, one run, one table.
//
//   Keychain.get, kernel path    in-process, search + read through KeyringReader
//   Keychain.get, socket path    in-process, one request to arcad over a pooled connection
//   keyctl_search + keyctl_read  the same key through libkeyutils' C calls (the floor)
//   keyctl_read                  the read alone, serial known
//
// Runs as root: starts arcad (found beside this binary, or at $ARCAD) with a
// temporary state directory and socket, then measures twice: as root, whose
// user keyring on a test machine holds whatever other runs left there (a
// keyring search walks every keyring linked below @u), and as a throwaway user
// with a fresh @u (this binary again, `bench-api measure SOCKET`, via setpriv).
// Each run enrolls its own vault and locks it at the end; arcad is stopped, its
// parked-keys ring removed and the user deleted, so no secret stays behind.
import Arca
import ArcaClient
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaSystem
import CKeyutils
import Glibc

func now() -> Double { Clock.monotonicSeconds() }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func fail(_ message: String) -> Never {
    try? FileDescriptor.standardError.writeAll("bench-api: \(message)\n")
    exit(1)
}

func time(_ iterations: Int, _ body: () throws -> Void) rethrows -> [Double] {
    for _ in 0..<min(200, iterations) { try body() }  // warm up
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = now()
        try body()
        samples.append(now() - start)
    }
    return samples
}

/// Runs `argv`, stdout to `output` (a file descriptor) when given; returns the exit status.
func spawn(_ argv: [String], output: Int32? = nil) -> Int32 {
    var pid: pid_t = 0
    var cArgs = argv.map { strdup($0) } + [nil]
    defer { cArgs.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    if let output { posix_spawn_file_actions_adddup2(&actions, output, 1) }
    guard posix_spawnp(&pid, argv[0], &actions, nil, &cArgs, environ) == 0 else { return -1 }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    return status
}

/// One row per operation: name, median, p90, runs (tab-separated, for the parent).
func measure(socket: String) throws -> [(String, Double, Double, Int)] {
    let uid = getuid()
    let client = try ArcadClient(path: socket)
    let parameters = KeyDerivationParameters(
        opsLimit: 2, memoryLimit: 64 << 20, salt: (0..<16).map { _ in UInt8.random(in: 0...255) })
    let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
    if case .error(let status, let message) = try client.send(.enroll(uid: uid, key: key, parameters: parameters)) {
        throw KeychainError(code: .init(rawValue: status.rawValue), message: "enroll: \(message)")
    }
    defer { _ = try? client.send(.lock(uid: uid, classes: .all)) }

    let service = "arca.bench.api.\(UInt32.random(in: 0...UInt32.max))"
    let keychain = Keychain(service: service).socketPath(socket)
    try keychain.set(String(repeating: "s", count: 32), key: "token")
    defer { try? keychain.removeAll() }
    guard let first = try keychain.getDataWithSource("token"), first.source == .kernel else {
        throw KeychainError(code: .param, message: "the item is not in the kernel")
    }
    var rows: [(String, [Double])] = []
    rows.append(("Keychain.get (kernel path)", try time(20_000) { _ = try keychain.getData("token") }))
    let socketOnly = keychain.kernelReads(false)
    rows.append(("Keychain.get (socket path)", try time(2_000) { _ = try socketOnly.getData("token") }))
    let description = "arca:genp:\(service):token"
    var buffer = [CChar](repeating: 0, count: 256)
    rows.append(
        (
            "keyctl_search + keyctl_read (C)",
            time(20_000) {
                let serial = keyctl_search(KEY_SPEC_PROCESS_KEYRING, "user", description, 0)
                _ = keyctl_read(Int32(truncatingIfNeeded: serial), &buffer, buffer.count)
            }
        ))
    let serial = Int32(truncatingIfNeeded: keyctl_search(KEY_SPEC_PROCESS_KEYRING, "user", description, 0))
    guard serial > 0 else { throw KeychainError(code: .param, message: "keyctl_search found nothing") }
    rows.append(("keyctl_read alone (C)", time(20_000) { _ = keyctl_read(serial, &buffer, buffer.count) }))
    return rows.map { ($0.0, percentile($0.1, 0.5), percentile($0.1, 0.9), $0.1.count) }
}

// The child: measure as whoever we are, print machine-readable rows.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "measure" {
    do {
        for (name, median, p90, runs) in try measure(socket: CommandLine.arguments[2]) {
            print("\(name)\t\(median)\t\(p90)\t\(runs)")
        }
        exit(0)
    } catch {
        fail("\(error)")
    }
}

guard getuid() == 0 else { fail("must run as root (it starts arcad and creates a user)") }

var exe = [CChar](repeating: 0, count: 4096)
guard readlink("/proc/self/exe", &exe, exe.count - 1) > 0 else { fail("cannot find myself") }
let selfPath = String(cString: exe)
let arcadPath =
    getenv("ARCAD").map { String(cString: $0) }
    ?? String(selfPath[..<(selfPath.lastIndex(of: "/") ?? selfPath.startIndex)]) + "/arcad"
guard access(arcadPath, X_OK) == 0 else {
    fail("no arcad at \(arcadPath) (build it: swift build -c release --product arcad)")
}

var template = Array("/tmp/arca-bench-api-XXXXXX".utf8CString)
guard let dirPointer = mkdtemp(&template) else { fail("mkdtemp failed") }
let dir = String(cString: dirPointer)
chmod(dir, 0o755)  // the throwaway user reaches the socket in it
let socketPath = dir + "/arcad.sock"

var arcadPID: pid_t = 0
let arcadArgv = [arcadPath, "--foreground", "--state-dir", dir + "/state", "--socket", socketPath]
var arcadArgs: [UnsafeMutablePointer<CChar>?] = arcadArgv.map { strdup($0) }
arcadArgs.append(nil)
var quiet = posix_spawn_file_actions_t()
posix_spawn_file_actions_init(&quiet)
posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0)
guard posix_spawn(&arcadPID, arcadPath, &quiet, nil, &arcadArgs, environ) == 0 else { fail("cannot start arcad") }

let userName = "arcab\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
var userUID: UInt32?

@MainActor func cleanUp() {
    if let uid = userUID {
        _ = KeyringLayout().purge(user: uid)
        _ = spawn(["userdel", "-f", userName])
    }
    kill(arcadPID, SIGTERM)
    var status: Int32 = 0
    waitpid(arcadPID, &status, 0)
    _ = unlink(socketPath)
    // arcad's parked-keys ring (`arcad:parked:<tag of the state directory>`) outlives it.
    if let digest = try? KeyedHash.blake2b(Array((dir + "/state").utf8), outputLength: 16) {
        let tag = digest.prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try? KeySerial.userKeyring.search(type: "keyring", description: "arcad:parked:" + tag).invalidate()
    }
    _ = spawn(["rm", "-rf", dir])
}

var ready = false
for _ in 0..<400 where !ready {
    ready = (try? ArcadClient(path: socketPath)) != nil
    if !ready { usleep(25_000) }
}
guard ready else {
    cleanUp()
    fail("arcad did not open \(socketPath)")
}

// Root, in a user keyring shared with everything else that ran as root.
let rootRings = (try? KeySerial.userKeyring.links().count) ?? 0
let asRoot: [(String, Double, Double, Int)]
do {
    asRoot = try measure(socket: socketPath)
} catch {
    cleanUp()
    fail("as root: \(error)")
}

// A throwaway user with a fresh user keyring.
var asUser: [String: (Double, Double)] = [:]
if spawn(["useradd", "-M", "-N", "-s", "/usr/sbin/nologin", userName]) == 0, let entry = getpwnam(userName) {
    userUID = entry.pointee.pw_uid
    var fds: [Int32] = [0, 0]
    pipe(&fds)
    let argv = [
        "setpriv", "--reuid=\(entry.pointee.pw_uid)", "--regid=\(entry.pointee.pw_gid)", "--clear-groups",
        selfPath, "measure", socketPath,
    ]
    var output: [UInt8] = []
    // The child writes a few hundred bytes, well under a pipe's buffer: wait, then read.
    let status = spawn(argv, output: fds[1])
    close(fds[1])
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fds[0], &chunk, chunk.count)
        if n <= 0 { break }
        output += chunk[0..<n]
    }
    close(fds[0])
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        let fields = line.split(separator: "\t")
        if fields.count == 4, let median = Double(fields[1]), let p90 = Double(fields[2]) {
            asUser[String(fields[0])] = (median, p90)
        }
    }
    if status != 0 {
        try? FileDescriptor.standardError.writeAll("bench-api: the run as \(userName) failed (status \(status))\n")
    }
}
cleanUp()

func micro(_ seconds: Double) -> String {
    let text = String(Int((seconds * 1e6 * 100).rounded()))
    let padded = text.count < 3 ? String(repeating: "0", count: 3 - text.count) + text : text
    return padded.dropLast(2) + "." + padded.suffix(2)
}
func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
func lpad(_ s: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - s.count)) + s }

print("bench-api: Keychain.get of one 32-byte secret, in-process; µs, median / p90")
print(
    pad("operation", 34) + lpad("fresh user", 18) + lpad("root (@u: \(rootRings) links)", 24)
        + lpad("runs", 8))
for (name, median, p90, runs) in asRoot {
    let user = asUser[name].map { micro($0.0) + " / " + micro($0.1) } ?? "—"
    print(pad(name, 34) + lpad(user, 18) + lpad(micro(median) + " / " + micro(p90), 24) + lpad(String(runs), 8))
}
if let kernel = asUser["Keychain.get (kernel path)"]?.0 {
    print("target: kernel path ≤ 10 µs for a user — \(kernel <= 10e-6 ? "met" : "NOT met") (\(micro(kernel)) µs)")
}
