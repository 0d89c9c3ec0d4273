// arcad-probe: a minimal arcad client that the arcad tests run as throwaway users
// (through setpriv), so that authorization is decided by a real SO_PEERCRED.
// Prints one line: "ok …" or "error <OSStatus>". Secrets here are test data.
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

if command == "hold" {  // hold N: open N connections at once; how many get an answer
    let count = Int(rest.first ?? "") ?? 0
    var clients: [ArcadClient] = []
    for _ in 0..<count {
        if let c = try? ArcadClient(path: socket, timeoutMilliseconds: 2000) { clients.append(c) }
    }
    var answered = 0
    for c in clients where (try? c.send(.status(uid: nil))) != nil { answered += 1 }
    print("ok answered=\(answered) of \(count)")
    exit(0)
}

let request: Request
switch command {
case "status": request = .status(uid: rest.isEmpty ? nil : uid(0))
case "kdf": request = .kdfParameters(uid: uid(0))
case "add":  // add UID SERVICE ACCOUNT, secret on stdin
    request = .add(AddRequest(
        vault: .user(uid: uid(0)), itemClass: .genericPassword,
        attributes: [.service: .string(rest[1]), .account: .string(rest[2])], secret: readLine0()))
case "get":  // get UID SERVICE ACCOUNT
    request = .copyMatching(vault: .user(uid: uid(0)), query: Query(
        itemClass: .genericPassword, attributes: [.service: .string(rest[1]), .account: .string(rest[2])],
        returnFlags: .data))
case "unlock-password":  // unlock-password UID, password on stdin
    request = .unlockWithPassword(uid: uid(0), password: readLine0())
case "lock": request = .lock(uid: uid(0), classes: .whenUnlocked)
case "lock-all": request = .lockAll
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
        print("ok vault=\(s.hasVault) unlocked=\(s.unlocked.rawValue) sessions=\(s.sessionCount) sync=\(!s.passwordOutOfSync)")
    case .kdfParameters(let p): print("ok \(p == nil ? "none" : "params")")
    case .items(let items):
        print("ok " + items.map { String(decoding: $0.data ?? [], as: UTF8.self) }.joined(separator: ","))
    case .sessions(let list): print("ok \(list.count)")
    case .recoveryKey: print("ok recovery")
    case .grants(let list): print("ok \(list.count)")
    }
} catch {
    print("error \(error.status.rawValue) \(error)")
}
