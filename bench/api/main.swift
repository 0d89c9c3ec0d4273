// bench-api: the figures of issue 8, one run, one table.
//
//   Keychain.get, kernel path    in-process, search + read through KeyringReader
//   Keychain.get, socket path    in-process, one request to arcad over a pooled connection
//   keyctl_search + keyctl_read  the same key through libkeyutils' C calls (the floor)
//   keyctl_read                  the read alone, serial known
//
// Runs as root: starts arcad (found beside this binary, or at $ARCAD) with a
// temporary state directory and socket, enrolls root's vault there, and locks
// it and stops arcad at the end, so no secret stays in the kernel.
import Arca
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import CKeyutils
import Glibc

func now() -> Double { Clock.monotonicSeconds() }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func fail(_ message: String) -> Never {
    fputs("bench-api: \(message)\n", stderr)
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

guard getuid() == 0 else { fail("must run as root (it starts arcad)") }

var arcadPath = String(cString: getenv("ARCAD") ?? strdup(""))
if arcadPath.isEmpty {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    let exe = n > 0 ? String(cString: buffer) : ""
    arcadPath = String(exe[..<(exe.lastIndex(of: "/") ?? exe.startIndex)]) + "/arcad"
}
guard access(arcadPath, X_OK) == 0 else {
    fail("no arcad at \(arcadPath) (build it: swift build -c release --product arcad)")
}

var template = Array("/tmp/arca-bench-api-XXXXXX".utf8CString)
guard let dirPointer = mkdtemp(&template) else { fail("mkdtemp failed") }
let dir = String(cString: dirPointer)
let socketPath = dir + "/arcad.sock"

var pid: pid_t = 0
let argv = [arcadPath, "--foreground", "--state-dir", dir + "/state", "--socket", socketPath]
var cArgs = argv.map { strdup($0) } + [nil]
var devnull = posix_spawn_file_actions_t()
posix_spawn_file_actions_init(&devnull)
posix_spawn_file_actions_addopen(&devnull, 2, "/dev/null", O_WRONLY, 0)
guard posix_spawn(&pid, arcadPath, &devnull, nil, &cArgs, environ) == 0 else { fail("cannot start arcad") }

func stopArcad() {
    if let client = try? ArcadClient(path: socketPath) { _ = try? client.send(.lock(uid: 0, classes: .all)) }
    kill(pid, SIGTERM)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    _ = unlink(socketPath)
    // arcad's parked-keys ring (`arcad:parked:<tag of the state directory>`) outlives it.
    if let digest = try? KeyedHash.blake2b(Array((dir + "/state").utf8), outputLength: 16) {
        let tag = digest.prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        try? KeySerial.userKeyring.search(type: "keyring", description: "arcad:parked:" + tag).invalidate()
    }
}

var client: ArcadClient?
for _ in 0..<400 where client == nil {
    client = try? ArcadClient(path: socketPath)
    if client == nil { usleep(25_000) }
}
guard let client else {
    stopArcad()
    fail("arcad did not open \(socketPath)")
}
let parameters = KeyDerivationParameters(
    opsLimit: 2, memoryLimit: 64 << 20, salt: (0..<16).map { _ in UInt8.random(in: 0...255) })
let enrollKey = (0..<32).map { _ in UInt8.random(in: 0...255) }
let enrolled = try? client.send(.enroll(uid: 0, key: enrollKey, parameters: parameters))
if case .error(let status, let message)? = enrolled {
    stopArcad()
    fail("enroll: \(status) \(message)")
}

let service = "arca.bench.api.\(UInt32.random(in: 0...UInt32.max))"
let keychain = Keychain(service: service).socketPath(socketPath)
let secret = String(repeating: "s", count: 32)
var rows: [(String, [Double])] = []
do {
    try keychain.set(secret, key: "token")
    guard let first = try keychain.getDataWithSource("token"), first.source == .kernel else {
        throw KeychainError(code: .param, message: "the item is not in the kernel")
    }
    rows.append(("Keychain.get (kernel path)", try time(20_000) { _ = try keychain.getData("token") }))
    let socketOnly = keychain.kernelReads(false)
    rows.append(("Keychain.get (socket path)", try time(2_000) { _ = try socketOnly.getData("token") }))

    let description = "arca:genp:\(service):token"
    var buffer = [CChar](repeating: 0, count: 256)
    rows.append(
        ("keyctl_search + keyctl_read (C)",
            time(20_000) {
                let serial = keyctl_search(KEY_SPEC_PROCESS_KEYRING, "user", description, 0)
                _ = keyctl_read(Int32(truncatingIfNeeded: serial), &buffer, buffer.count)
            }))
    let serial = Int32(truncatingIfNeeded: keyctl_search(KEY_SPEC_PROCESS_KEYRING, "user", description, 0))
    guard serial > 0 else { throw KeychainError(code: .param, message: "keyctl_search found nothing") }
    rows.append(("keyctl_read alone (C)", time(20_000) { _ = keyctl_read(serial, &buffer, buffer.count) }))
    try keychain.removeAll()
} catch {
    stopArcad()
    fail("\(error)")
}
stopArcad()

func micro(_ seconds: Double) -> String {
    let us = seconds * 1e6
    let text = String(Int((us * 100).rounded()))
    let padded = text.count < 3 ? String(repeating: "0", count: 3 - text.count) + text : text
    return padded.dropLast(2) + "." + padded.suffix(2)
}
func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
func lpad(_ s: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - s.count)) + s }

print("bench-api: one 32-byte secret, in-process, \(ProcessInfoLite.cores) cores; median and p90 in µs")
print(pad("operation", 34) + lpad("median", 10) + lpad("p90", 10) + lpad("runs", 8))
for (name, samples) in rows {
    print(pad(name, 34) + lpad(micro(percentile(samples, 0.5)), 10) + lpad(micro(percentile(samples, 0.9)), 10)
        + lpad(String(samples.count), 8))
}
let kernelMedian = percentile(rows[0].1, 0.5)
print("target: kernel path ≤ 10 µs — \(kernelMedian <= 10e-6 ? "met" : "NOT met") (\(micro(kernelMedian)) µs)")

enum ProcessInfoLite {
    static var cores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
}
