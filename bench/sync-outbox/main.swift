// bench-sync-outbox: what sync costs a write (issue 17). The latency of the request
// `arca update` sends (a new secret for one synchronizable item), for a user with a sync
// circle beside the peer, the same arcad and a user with the same items and no circle,
// at growing numbers of synchronizable items. Target: a small constant over the peer that
// does not grow with the number of items. Then the other direction: the latency of the
// push `arca-sync run` sends with one incoming record (another machine's new secret for one
// item) into a vault of as many items; it should not grow with them either.
//
//   swift build -c release && .build/release/bench-sync-outbox [N…]     (as root; N: 100 2000 10000)
//
// Starts the release arcad next to this binary (or BENCH_ARCAD=path, e.g. another build's)
// with a temporary state directory; users 71101 (circle) and 71102 (none), then 71103 and
// 71104 (one circle, two devices) have no passwd entry (arcad does not need one). One run, no assertion: figures only.
import ArcaClient
import ArcaCrypto
import ArcaProtocol
import Foundation

/// arcad's pid, stopped on every way out (`fail` included).
nonisolated(unsafe) var arcadPID: pid_t = 0

@Sendable func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench-sync-outbox: \(message)\n".utf8))
    if arcadPID > 0 { kill(arcadPID, SIGTERM) }
    exit(1)
}

guard getuid() == 0 else { fail("run as root (arcad needs it)") }
let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }.sorted()
let counts = sizes.isEmpty ? [100, 2_000, 10_000] : sizes
let rounds = 40
let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let arcadPath = ProcessInfo.processInfo.environment["BENCH_ARCAD"] ?? here.appendingPathComponent("arcad").path
guard FileManager.default.isExecutableFile(atPath: arcadPath) else { fail("no \(arcadPath): swift build -c release") }

let work = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sync-outbox-\(getpid())").path
try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
let socketPath = work + "/arcad.sock"
let arcad = Process()
arcad.executableURL = URL(fileURLWithPath: arcadPath)
arcad.arguments = ["--foreground", "--config", "/dev/null", "--state-dir", work + "/state", "--socket", socketPath]
arcad.standardError = FileHandle(forWritingAtPath: "/dev/null")
arcad.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
try arcad.run()
arcadPID = arcad.processIdentifier

func connect() -> ArcadClient {
    for _ in 0..<250 {
        if let c = try? ArcadClient(path: socketPath, timeoutMilliseconds: 600_000) { return c }
        usleep(20_000)
    }
    fail("arcad did not start")
}

let synced: UInt32 = 71101
let peer: UInt32 = 71102
func attributes(_ n: Int) -> AttributeMap {
    [.service: .string("bench"), .account: .string("acct\(n)"), .synchronizable: .bool(true)]
}
func secret(_ n: Int, _ round: Int) -> [UInt8] { Array(String(format: "secret-%06d-%04d-", n, round).utf8) }

let parameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("bench-outbox-slt".utf8))
let password = try Array("bench".utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
guard
    let key = try? Argon2id.deriveKey(
        password: password, parameters: KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: parameters.salt)
    ).withUnsafeBytes({ Array($0) })
else { fail("cannot derive the enrolment key") }
/// Sends `request`; a user without a login session may be locked by arcad meanwhile: then
/// unlocked and sent again (`timed` then times only the second try).
@discardableResult
func send(_ client: ArcadClient, _ request: Request, uid: UInt32? = nil, timed: ((Double) -> Void)? = nil) -> Reply {
    for attempt in 0..<2 {
        let t0 = Clock.monotonicSeconds()
        guard let reply = try? client.send(request) else { fail("request failed") }
        let elapsed = Clock.monotonicSeconds() - t0
        if case .error(let status, _) = reply, status.rawValue == -25308, attempt == 0, let uid {
            send(client, .unlock(uid: uid, key: key))
            continue
        }
        if case .error(let status, let message) = reply { fail("error \(status.rawValue) \(message)") }
        timed?(elapsed)
        return reply
    }
    fail("still locked after an unlock")
}

/// Adds item `n` (its first secret) to `uid`'s vault.
func add(_ client: ArcadClient, _ uid: UInt32, _ n: Int) {
    let request = AddRequest(
        vault: .user(uid: uid), itemClass: .genericPassword, attributes: attributes(n), secret: secret(n, 0))
    send(client, .add(request), uid: uid)
}

let client = connect()
for uid in [synced, peer] { send(client, .enroll(uid: uid, key: key, parameters: parameters)) }
guard case .syncDevice = send(client, .syncInit(uid: synced)) else { fail("sync init") }

func p50(_ samples: [Double]) -> Double { samples.sorted()[samples.count / 2] }
func ms(_ seconds: Double) -> String { String(format: "%8.2f ms", seconds * 1000) }
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }

print("bench-sync-outbox: `arca update` request latency, one synchronizable item's secret (p50 of \(rounds))")
print("arcad: \(arcadPath)")
print(pad("synchronizable items", 22) + pad("sync on (circle)", 20) + pad("sync off (peer)", 20) + "difference")
var filled = 0
for count in counts {
    let start = Clock.monotonicSeconds()
    for n in filled..<count { for uid in [synced, peer] { add(client, uid, n) } }
    filled = count
    let fillSeconds = Clock.monotonicSeconds() - start
    var results: [UInt32: [Double]] = [:]
    for round in 1...rounds {
        let n = (round * 7919) % count
        // Alternated, so that both users see the same machine load.
        for uid in [synced, peer] {
            send(
                client,
                .update(
                    UpdateRequest(
                        vault: .user(uid: uid), query: Query(itemClass: .genericPassword, attributes: attributes(n)),
                        attributes: [:], secret: secret(n, round))), uid: uid
            ) { results[uid, default: []].append($0) }
        }
    }
    let on = p50(results[synced] ?? [0])
    let off = p50(results[peer] ?? [0])
    print(
        pad("\(count)", 22) + pad(ms(on), 20) + pad(ms(off), 20) + ms(on - off)
            + String(format: "   (fill: %.1f s)", fillSeconds))
}
// The inbox: arcad applying one incoming record (another machine's new secret for one item)
// into a vault of N synchronizable items, the request `arca-sync run` sends. The other machine
// is a second user of the same arcad (a circle does not care which uid a device serves).
let sender: UInt32 = 71103
let receiver: UInt32 = 71104
for uid in [sender, receiver] { send(client, .enroll(uid: uid, key: key, parameters: parameters)) }
guard case .syncDevice(let senderID) = send(client, .syncInit(uid: sender)),
    case .syncDevice(let receiverID) = send(client, .syncJoin(uid: receiver, approver: senderID)),
    case .syncApproval(_, let sas) = send(
        client, .syncApprove(uid: sender, device: receiverID, shortAuthenticationString: nil)),
    case .syncApproval(let approval, _) = send(
        client, .syncApprove(uid: sender, device: receiverID, shortAuthenticationString: sas)),
    !approval.isEmpty
else { fail("sync join") }

/// The sender's files the receiver has not seen, pushed as the agent pushes them (in as many
/// pulls as the frame needs); the push requests' total time, or nil if the receiver was locked
/// (then unlocked: its queue applied, the round is not counted).
func carry(_ client: ArcadClient, after carried: inout UInt64) -> Double? {
    var total = 0.0
    var locked = false
    repeat {
        guard case .syncOutbox(let outbox) = send(client, .syncPull(uid: sender, after: carried)) else {
            fail("sync pull")
        }
        var files =
            carried > 0
            ? []
            : outbox.approvals.filter { $0.device == receiverID }.map {
                SyncFile(kind: .approval, author: outbox.device, bytes: $0.bytes)
            }
        files += outbox.records.map { SyncFile(kind: .record, author: outbox.device, bytes: $0.bytes) }
        if !outbox.head.isEmpty { files.append(SyncFile(kind: .head, author: outbox.device, bytes: outbox.head)) }
        let pushed = send(client, .syncPush(uid: receiver, files: files)) { total += $0 }
        guard case .syncPushResult(let outcomes) = pushed else { fail("sync push") }
        if outcomes.contains(where: { $0.code == .refused }) { fail("a file was refused: \(outcomes)") }
        locked = locked || outcomes.contains { $0.code == .queued }
        carried = outbox.records.last?.seq ?? carried
        if !outbox.more { break }
    } while true
    if locked { send(client, .unlock(uid: receiver, key: key)) }
    return locked ? nil : total
}
var carried: UInt64 = 0
_ = carry(client, after: &carried)

print("")
print("bench-sync-outbox: `arca-sync run` push of one incoming record (a new secret for one item), p50 of \(rounds)")
print(pad("items in the vault", 22) + pad("apply one record", 20) + "fill (N records applied in batches)")
var received = 0
for count in counts {
    for n in received..<count { add(client, sender, n) }
    received = count
    // arcad locks a user with no login session after a while: unlocked first, so that the
    // fill is applied and timed, not queued.
    send(client, .unlock(uid: receiver, key: key))
    let fill = carry(client, after: &carried) ?? 0
    var samples: [Double] = []
    for round in 0...rounds {
        let n = (round * 7919) % count
        send(
            client,
            .update(
                UpdateRequest(
                    vault: .user(uid: sender), query: Query(itemClass: .genericPassword, attributes: attributes(n)),
                    attributes: [:], secret: secret(n, round + 1000))), uid: sender)
        // Round 0 warms the receiver's caches up.
        if let seconds = carry(client, after: &carried), round > 0 { samples.append(seconds) }
    }
    print(pad("\(count)", 22) + pad(ms(p50(samples.isEmpty ? [0] : samples)), 20) + String(format: "%.2f s", fill))
}

// Locked first, on a fresh connection: a terminated arcad parks the users' class keys in a
// ring in root's @u that nothing would ever collect (lockAll drops the keys and the ring).
_ = try? connect().send(.lockAll)
arcad.terminate()
arcad.waitUntilExit()
try? FileManager.default.removeItem(atPath: work)
