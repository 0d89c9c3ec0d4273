// arca-lib-probe: the library's lock cycle, run by ArcaTests as a throwaway
// user (setpriv) so that locking touches only that user's vault and keyring.
// Prints one line per step ("step: result"); the test compares them exactly.
// Secrets here are test data.
import Arca
import ArcaClient
import ArcaProtocol
import Glibc

let arguments = CommandLine.arguments
guard arguments.count == 2 || (arguments.count >= 4 && arguments[2].hasPrefix("pool-")) else {
    print("usage: arca-lib-probe SOCKET | SOCKET pool-fork SERVICE | SOCKET pool-setuid SERVICE UID GID")
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

// The connection pool's attacks (ConnectionPoolRootTests), run as root; SERVICE
// names a system item (account "k") granted to nobody, so only root reads it.
if arguments.count >= 4 {
    let service = arguments[3]
    func systemRead() -> String {
        describe { () throws(KeychainError) in try Keychain.system(service: service).socketPath(socket).get("k") }
    }
    /// The inodes of this process's sockets ("socket:[N]" links in /proc/self/fd).
    func sockets() -> Set<String> {
        var found = Set<String>()
        guard let directory = opendir("/proc/self/fd") else { return found }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            var target = [CChar](repeating: 0, count: 256)
            let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
            guard n > 0 else { continue }
            let text = String(decoding: target.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if text.hasPrefix("socket:") { found.insert(text) }
        }
        return found
    }
    switch arguments[2] {
    case "pool-fork":  // the child of a process that pooled a connection
        // Sockets inherited from whoever started us are not the pool's.
        let inherited = sockets()
        print("parent: " + systemRead())
        let pooled = sockets().subtracting(inherited)
        fflush(nil)
        let child = fork()
        if child == 0 {
            let read = systemRead()
            let mine = sockets().subtracting(inherited)
            let verdict =
                pooled.isEmpty
                ? "no pooled connection" : mine.isDisjoint(with: pooled) ? "own connection" : "parent's connection"
            print("child: \(read), " + verdict)
            fflush(nil)
            _exit(0)
        }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        print("parent again: " + systemRead())
    case "pool-setuid" where arguments.count == 6:  // root that became UID:GID
        print("root: " + systemRead())
        guard let uid = UInt32(arguments[4]), let gid = UInt32(arguments[5]), setgroups(0, nil) == 0, setgid(gid) == 0,
            setuid(uid) == 0, geteuid() == uid
        else {
            print("error: cannot drop root")
            exit(1)
        }
        print("after setuid: " + systemRead())
    default:
        print("usage: unknown pool mode \(arguments[2])")
        exit(2)
    }
    exit(0)
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
print(
    "set: "
        + describe { () throws(KeychainError) in
            try keychain.set("v1", key: "wu")
            return "ok"
        })
print(
    "set afu: "
        + describe { () throws(KeychainError) in
            try lasting.set("v2", key: "afu")
            return "ok"
        })
print(
    "get: "
        + describe { () throws(KeychainError) in
            try keychain.getDataWithSource("wu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
        })
print("get missing: " + describe { () throws(KeychainError) in try keychain.get("absent") })
print("lock: " + send(.lock(uid: uid, classes: .whenUnlocked)))
print("get locked: " + describe { () throws(KeychainError) in try keychain.get("wu") })
print("get missing locked: " + describe { () throws(KeychainError) in try keychain.get("absent") })
print(
    "get afu: "
        + describe { () throws(KeychainError) in
            try lasting.getDataWithSource("afu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
        })
print("unlock: " + send(.unlock(uid: uid, key: key)))
print(
    "get unlocked: "
        + describe { () throws(KeychainError) in
            try keychain.getDataWithSource("wu").map { "\(String(decoding: $0.data, as: UTF8.self)) from \($0.source)" }
        })
print("lock all: " + send(.lockAll))
print("get afu locked: " + describe { () throws(KeychainError) in try lasting.get("afu") })
print("get missing all locked: " + describe { () throws(KeychainError) in try keychain.get("absent") })
