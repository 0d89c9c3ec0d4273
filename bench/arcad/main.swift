// bench-arcad: arcad over its socket — requests per second and latency of get and
// add with 1 and 8 clients, and arcad's memory with 10 users × 1,000 items.
//
//   swift build -c release && swift run -c release bench-arcad    (as root)
//
// Starts the release arcad next to this binary with a temporary state directory.
// The users are uids 71001… with no passwd entry (arcad does not need one).
// bench/arcad/run.sh measures the peer (gnome-keyring-daemon) first and hands its
// figures over in BENCH_ARCAD_PEER_RSS / BENCH_ARCAD_PEER_HWM, so that the memory
// rows print side by side; bench/pam uses the helper modes in Helpers.swift.
import ArcaClient
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import Foundation

runHelperModeIfAsked()

let users: [UInt32] = (71001...71010).map { $0 }
/// `bench-arcad [ITEMS]`: items per user (default 1,000). `BENCH_ARCAD_LOG=FILE`
/// keeps arcad's verbose log.
let itemsPerUser = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 1_000 : 1_000
let logPath = ProcessInfo.processInfo.environment["BENCH_ARCAD_LOG"]

@Sendable func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench-arcad: \(message)\n".utf8))
    exit(1)
}

guard getuid() == 0 else { fail("run as root (arcad needs it)") }
let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let arcadPath = here.appendingPathComponent("arcad").path
guard FileManager.default.isExecutableFile(atPath: arcadPath) else { fail("no \(arcadPath): swift build -c release") }

let work = FileManager.default.temporaryDirectory.appendingPathComponent("bench-arcad-\(getpid())").path
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
let socketPath = work + "/arcad.sock"
let arcad = Process()
arcad.executableURL = URL(fileURLWithPath: arcadPath)
arcad.arguments =
    ["--foreground", "--config", "/dev/null", "--state-dir", work + "/state", "--socket", socketPath]
    + (logPath == nil ? [] : ["--verbose"])
if let logPath { FileManager.default.createFile(atPath: logPath, contents: nil) }
arcad.standardError = FileHandle(forWritingAtPath: logPath ?? "/dev/null")
try arcad.run()
defer {}

@Sendable func connect() -> ArcadClient {
    for _ in 0..<250 {
        if let c = try? ArcadClient(path: socketPath, timeoutMilliseconds: 30_000) { return c }
        usleep(20_000)
    }
    fail("arcad did not start")
}

@Sendable func expectOK(_ reply: Reply) {
    switch reply {
    case .ok, .items, .status: return
    default: fail("unexpected reply \(reply)")
    }
}

@Sendable func addRequest(_ uid: UInt32, _ n: Int) -> Request {
    let secret = Array(String(format: "secret-%06d-", n).utf8) + [UInt8](repeating: 0x61, count: 50)
    return .add(
        AddRequest(
            vault: .user(uid: uid), itemClass: .genericPassword,
            attributes: [.service: .string("bench"), .account: .string("acct\(n)")],
            secret: Array(secret.prefix(64))))
}

@Sendable func getRequest(_ uid: UInt32, _ n: Int) -> Request {
    .copyMatching(
        vault: .user(uid: uid),
        query: Query(
            itemClass: .genericPassword, attributes: [.service: .string("bench"), .account: .string("acct\(n)")],
            returnFlags: .data))
}

func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

struct Run {
    let label: String
    let requests: Int
    let seconds: Double
    let latencies: [Double]
}

/// `clients` threads, each on its own connection (and user), each sending `perClient` requests.
func measure(
    _ label: String, clients: Int, perClient: Int, fresh: Bool = false,
    _ request: @escaping @Sendable (Int, Int) -> Request
) -> Run {
    let collected = Collected()
    let group = DispatchGroup()
    let start = Clock.monotonicSeconds()
    for c in 0..<clients {
        group.enter()
        Thread {
            var mine: [Double] = []
            mine.reserveCapacity(perClient)
            var client = connect()
            for i in 0..<perClient {
                let t0 = Clock.monotonicSeconds()
                if fresh { client = connect() }
                guard let reply = try? client.send(request(c, i)) else { fail("\(label): request failed") }
                mine.append(Clock.monotonicSeconds() - t0)
                expectOK(reply)
            }
            collected.append(mine)
            group.leave()
        }.start()
    }
    group.wait()
    return Run(
        label: label, requests: clients * perClient, seconds: Clock.monotonicSeconds() - start,
        latencies: collected.all)
}

// @unchecked: `values` is touched only while `lock` is held.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double] = []
    func append(_ more: [Double]) {
        lock.lock()
        values += more
        lock.unlock()
    }
    var all: [Double] {
        lock.lock()
        defer { lock.unlock() }
        return values
    }
}

// Enroll the users with one derived key (64 MiB, 1 pass: the cost is not what is measured here).
let parameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("bench-arcad-salt".utf8))
let password = try Array("bench".utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
let key = try Argon2id.deriveKey(
    password: password,
    parameters: KDFParameters(
        opsLimit: 1, memoryLimit: 64 << 20, salt: parameters.salt)
).withUnsafeBytes { Array($0) }
let setup = connect()
for uid in users { expectOK(try setup.send(.enroll(uid: uid, key: key, parameters: parameters))) }

var runs: [Run] = []
// Load: user 1's 1,000 items with one client (the add figure), then the others with 8.
runs.append(
    measure("add, 1 client (vault 0 → \(itemsPerUser) items)", clients: 1, perClient: itemsPerUser) { _, i in
        addRequest(users[0], i)
    })
let loadRest = measure("add, 9 clients (load the other users)", clients: 9, perClient: itemsPerUser) { c, i in
    addRequest(users[c + 1], i)
}
runs.append(
    Run(
        label: "add, 9 clients (9 vaults 0 → \(itemsPerUser) items)", requests: loadRest.requests,
        seconds: loadRest.seconds, latencies: loadRest.latencies))
runs.append(
    measure("status, 1 client (socket round-trip floor)", clients: 1, perClient: 5_000) { _, _ in
        .status(uid: users[0])
    })
runs.append(
    measure("get, 1 client", clients: 1, perClient: 5_000) { _, i in getRequest(users[0], (i * 7919) % itemsPerUser) })
runs.append(
    measure("get, 8 clients (8 users)", clients: 8, perClient: 2_500) { c, i in
        getRequest(users[c], (i * 7919) % itemsPerUser)
    })
runs.append(
    measure("get, 1 client, new connection each", clients: 1, perClient: 2_000, fresh: true) { _, i in
        getRequest(users[0], (i * 104_729) % itemsPerUser)
    })
runs.append(
    measure("add, 8 clients (8 vaults, +250 items each)", clients: 8, perClient: 250) { c, i in
        addRequest(users[c], itemsPerUser + i)
    })

let status = (try? String(contentsOfFile: "/proc/\(arcad.processIdentifier)/status", encoding: .utf8)) ?? ""
func field(_ name: String) -> String {
    status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.map {
        $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " ")
    } ?? "?"
}

/// "12345 kB" as /proc shows it → "12.1 MiB", so both columns read alike.
func mib(_ procValue: String) -> String {
    guard let kb = Double(procValue.split(separator: " ").first ?? "") else { return procValue }
    return String(format: "%.1f MiB", kb / 1024)
}

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func us(_ seconds: Double) -> String { String(format: "%.0f µs", seconds * 1e6) }

print("arcad over its socket (release build, \(users.count) users × \(itemsPerUser) items of 64-byte secrets)")
print(pad("workload", 44) + pad("requests/s", 12) + pad("p50", 10) + pad("p99", 10) + "target")
for r in runs {
    let target = r.label.hasPrefix("get, 1 client") && !r.label.contains("new connection") ? "p50 ≤ 100 µs" : ""
    print(
        pad(r.label, 44) + pad(String(format: "%.0f", Double(r.requests) / r.seconds), 12)
            + pad(us(percentile(r.latencies, 0.5)), 10) + pad(us(percentile(r.latencies, 0.99)), 10) + target)
}
print("")
let environment = ProcessInfo.processInfo.environment
let peerRSS =
    environment["BENCH_ARCAD_PEER_RSS"]
    ?? "not measured (bench/arcad/run.sh measures it; the issue quotes 18 MB)"
let peerHWM = environment["BENCH_ARCAD_PEER_HWM"] ?? "-"
let peerLabel = environment["BENCH_ARCAD_PEER_LABEL"] ?? "1 user × 1,000 items"
print(
    pad("memory", 44) + pad("arcad, \(users.count) users × \(itemsPerUser) items", 30)
        + "gnome-keyring-daemon, \(peerLabel)")
print(pad("RSS (VmRSS)", 44) + pad(mib(field("VmRSS")), 30) + peerRSS)
print(pad("peak RSS (VmHWM)", 44) + pad(mib(field("VmHWM")), 30) + peerHWM)
print("target: arcad RSS ≤ 30 MB")

// A fresh connection: arcad drops one idle for longer than client_timeout_ms, and a
// lockAll lost that way would leave every user's keys parked in root's @u.
_ = try? connect().send(.lockAll)
arcad.terminate()
arcad.waitUntilExit()
for uid in users { _ = KeyringLayout().purge(user: uid) }
try? FileManager.default.removeItem(atPath: work)
