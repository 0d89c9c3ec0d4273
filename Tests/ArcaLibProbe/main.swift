// arca-lib-probe: the library's lock cycle, run by ArcaTests as a throwaway
// user (setpriv) so that locking touches only that user's vault and keyring.
// Prints one line per step ("step: result"); the test compares them exactly.
// Secrets here are test data.
import Arca
import ArcaProtocol
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: arca-lib-probe SOCKET")
    exit(2)
}
let socket = arguments[1]
let uid = getuid()

func describe(_ body: () throws(KeychainError) -> String?) -> String {
    do {
        return try body() ?? "nil"
    } catch {
        return "error \(error.status)"
    }
}

func send(_ request: Request) -> String {
    do {
        let client = try ArcadClient(path: socket)
        switch try client.send(request) {
        case .error(let status, _): return "error \(status.rawValue)"
        default: return "ok"
        }
    } catch {
        return "error \(error.status.rawValue)"
    }
}

let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
let parameters = KeyDerivationParameters(
    opsLimit: 2, memoryLimit: 64 << 20, salt: (0..<16).map { _ in UInt8.random(in: 0...255) })
print("enroll: " + send(.enroll(uid: uid, key: key, parameters: parameters)))

let keychain = Keychain(service: "probe").socketPath(socket)
let lasting = keychain.accessibility(.afterFirstUnlock)
print("set: " + describe { () throws(KeychainError) in try keychain.set("v1", key: "wu"); return "ok" })
print("set afu: " + describe { () throws(KeychainError) in try lasting.set("v2", key: "afu"); return "ok" })
print("get: " + describe { () throws(KeychainError) in
    try keychain.getDataWithSource("wu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
})
print("get missing: " + describe { () throws(KeychainError) in try keychain.get("absent") })
print("lock: " + send(.lock(uid: uid, classes: .whenUnlocked)))
print("get locked: " + describe { () throws(KeychainError) in try keychain.get("wu") })
print("get missing locked: " + describe { () throws(KeychainError) in try keychain.get("absent") })
print("get afu: " + describe { () throws(KeychainError) in
    try lasting.getDataWithSource("afu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
})
print("unlock: " + send(.unlock(uid: uid, key: key)))
print("get unlocked: " + describe { () throws(KeychainError) in
    try keychain.getDataWithSource("wu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
})
print("lock all: " + send(.lockAll))
print("get afu locked: " + describe { () throws(KeychainError) in try lasting.get("afu") })
print("get missing all locked: " + describe { () throws(KeychainError) in try keychain.get("absent") })
