// arcad-probe: a minimal arcad client that the arcad tests run as throwaway users
// (through setpriv), so that authorization is decided by a real SO_PEERCRED.
// Prints one line: "ok …" or "error <OSStatus>". Secrets here are test data.
import ArcaClient
import ArcaProtocol
import Glibc

func readLine0() -> [UInt8] { Array((readLine() ?? "").utf8) }

let args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 2 else {
    print("usage: arcad-probe SOCKET COMMAND [ARGS]")
    exit(2)
}
let socket = args[0]
let command = args[1]
let rest = Array(args.dropFirst(2))
func uid(_ i: Int) -> UInt32 { UInt32(rest.count > i ? rest[i] : "") ?? UInt32.max }

if command == "hold" {  // hold N [SECONDS]: open N connections at once; how many get an answer; keep them SECONDS
    let count = Int(rest.first ?? "") ?? 0
    var clients: [ArcadClient] = []
    for _ in 0..<count {
        if let c = try? ArcadClient(path: socket, timeoutMilliseconds: 2000) { clients.append(c) }
    }
    var answered = 0
    for c in clients where (try? c.send(.status(uid: nil))) != nil { answered += 1 }
    print("ok answered=\(answered) of \(count)")
    fflush(nil)
    if rest.count > 1, let seconds = UInt32(rest[1]) { sleep(seconds) }
    exit(0)
}

if command == "trickle" {  // trickle N SECONDS: N slow clients, each announcing the largest body, one byte per 100 ms
    let count = Int(rest.first ?? "") ?? 0
    let seconds = Double(rest.count > 1 ? rest[1] : "") ?? 1
    let length = UInt32(ProtocolLimits.maximumBodyLength)
    // Header of an `add` (kind 0x000A) whose body never finishes arriving.
    let header =
        Frame.magic + [0, 1, 0, 0x0A, 0, 0, 0, 1] + [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: length >> $0) }
    var connected: [Int32] = []
    for _ in 0..<count {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var remote = sockaddr_un()
        remote.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &remote.sun_path) { for (i, b) in socket.utf8.enumerated() { $0[i] = b } }
        let rc = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else {
            close(fd)
            continue
        }
        _ = header.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        connected.append(fd)
    }
    print("ok connected=\(connected.count)")
    fflush(nil)
    var open = Set(connected)
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    while !open.isEmpty {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        if Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9 >= seconds { break }
        for fd in open {
            var byte: UInt8 = 1
            // EPIPE/ECONNRESET: arcad closed this connection.
            if send(fd, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno != EAGAIN { open.remove(fd) }
        }
        usleep(100_000)
    }
    print("ok closed-by-arcad=\(connected.count - open.count) of \(connected.count)")
    exit(0)
}

if command == "credential" {  // credential UNIT ID: systemd's LoadCredential= client, SOCKET = credentials socket
    // Bind the abstract address systemd uses, \0<random>/unit/<unit>/<id>, then read to EOF.
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var local = sockaddr_un()
    local.sun_family = sa_family_t(AF_UNIX)
    let name = [UInt8(0)] + Array("\(UInt32.random(in: 0..<UInt32.max))/unit/\(rest[0])/\(rest[1])".utf8)
    withUnsafeMutableBytes(of: &local.sun_path) { for (i, b) in name.enumerated() { $0[i] = b } }
    let localLength = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
    var remote = sockaddr_un()
    remote.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &remote.sun_path) { for (i, b) in socket.utf8.enumerated() { $0[i] = b } }
    let bound = withUnsafePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, localLength) }
    }
    let connected = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, connected == 0 else {
        print("error connect")
        exit(1)
    }
    var received = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        received += buffer[0..<n]
    }
    print("ok " + String(decoding: received, as: UTF8.self))
    exit(0)
}

if command == "open-session" {  // open-session UID: opens a PAM-like session (root), then waits for EOF on stdin
    let opening = SessionOpening(uid: uid(0), token: (0..<16).map { _ in UInt8.random(in: 0...255) }, service: "probe")
    do {
        let reply = try ArcadClient(path: socket, timeoutMilliseconds: 5000).send(.openSession(opening))
        print(reply == .ok ? "ok" : "error \(reply)")
    } catch {
        print("error \(error.status.rawValue) \(error)")
    }
    fflush(nil)
    while readLine() != nil {}
    exit(0)
}

let request: Request
switch command {
case "status": request = .status(uid: rest.isEmpty ? nil : uid(0))
case "kdf": request = .kdfParameters(uid: uid(0))
case "add":  // add UID SERVICE ACCOUNT, secret on stdin
    request = .add(
        AddRequest(
            vault: .user(uid: uid(0)), itemClass: .genericPassword,
            attributes: [.service: .string(rest[1]), .account: .string(rest[2])], secret: readLine0()))
case "get":  // get UID SERVICE ACCOUNT
    request = .copyMatching(
        vault: .user(uid: uid(0)),
        query: Query(
            itemClass: .genericPassword, attributes: [.service: .string(rest[1]), .account: .string(rest[2])],
            returnFlags: .data))
case "unlock-password":  // unlock-password UID, password on stdin
    request = .unlockWithPassword(uid: uid(0), password: readLine0())
case "lock": request = .lock(uid: uid(0), classes: .whenUnlocked)
case "lock-all": request = .lockAll
case "add-attribute":  // add-attribute UID LABEL NAME=VALUE...: a Secret Service item, secret on stdin
    var attributes: [String: String] = [:]
    for pair in rest.dropFirst(2) {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        attributes[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    request = .addAttributeItem(
        AttributeItemAdd(
            uid: uid(0), label: rest[1], attributes: attributes, contentType: "text/plain", secret: readLine0()))
case "sessions": request = .listSessions
case "reset":  // reset UID: an administrator reset, refused unless root
    request = .passwordReset(
        uid: uid(0), newKey: [UInt8](repeating: 7, count: 32),
        parameters: KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: [UInt8](repeating: 1, count: 16)))
case "system-get":
    request = .copyMatching(vault: .system, query: Query(itemClass: .genericPassword, returnFlags: .data))
default:
    print("usage: unknown command \(command)")
    exit(2)
}

do {
    let client = try ArcadClient(path: socket, timeoutMilliseconds: 5000)
    switch try client.send(request) {
    case .ok: print("ok")
    case .error(let status, let message): print("error \(status.rawValue) \(message)")
    case .status(let s):
        print(
            "ok vault=\(s.hasVault) unlocked=\(s.unlocked.rawValue) sessions=\(s.sessionCount) sync=\(!s.passwordOutOfSync)"
        )
    case .kdfParameters(let p): print("ok \(p == nil ? "none" : "params")")
    case .items(let items):
        print("ok " + items.map { String(decoding: $0.data ?? [], as: UTF8.self) }.joined(separator: ","))
    case .sessions(let list): print("ok \(list.count)")
    case .recoveryKey: print("ok recovery")
    case .grants(let list): print("ok \(list.count)")
    case .attributeItems(let list): print("ok \(list.items.count) locked=\(list.locked.count)")
    case .events(let batch): print("ok \(batch.events.count)")
    case .candidate: print("ok candidate")
    case .staleParameters: print("ok stale")
    case .attributeReferences(let list): print("ok \(list.unlocked.count) locked=\(list.locked.count)")
    case .collectionSettings(let settings): print("ok \(settings.label)")
    case .backup(let bytes): print("ok backup \(bytes.count)")
    case .importSummary(let added, let replaced, let unchanged): print("ok \(added) \(replaced) \(unchanged)")
    case .syncDevice(let id): print("ok device \(id.count)")
    case .syncApproval(let approval, let sas): print("ok approval \(approval.count) \(sas)")
    case .syncOutbox(let outbox): print("ok outbox \(outbox.records.count)")
    case .syncPushResult(let outcomes): print("ok pushed \(outcomes.count)")
    case .syncRemoval(let removal): print("ok epoch \(removal.epoch)")
    case .syncStatus(let status): print("ok seq \(status.seq)")
    case .syncConflicts(let list): print("ok conflicts \(list.count)")
    case .backupStaged(let length): print("ok staged \(length)")
    case .backupChunk(let bytes): print("ok chunk \(bytes.count)")
    case .backupReceived(let length): print("ok received \(length)")
    }
} catch {
    print("error \(error.status.rawValue) \(error)")
}
