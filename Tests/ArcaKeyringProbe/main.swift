// arca-keyring-probe: run by ArcaKeyringTests as a throwaway user (through
// setpriv) to exercise the keyring from that user's side. Every command prints
// one line, "ok …" or "error <ERRNO NAME>", so that tests assert exact codes.
// Test secrets are printed in hex: they are random test data, never real ones.
import ArcaCrypto
import ArcaKeyring
import Glibc

func hex(_ secret: SecretBytes) -> String {
    secret.withUnsafeBytes {
        $0.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}

func report(_ body: () throws -> String) -> Int32 {
    do {
        print("ok " + (try body()))
        return 0
    } catch let error as KeyringErrno {
        print("error \(error.name)")
    } catch let error as KeyringError {
        print("error \(error.errno?.name ?? error.description)")
    } catch {
        print("error \(error)")
    }
    return 1
}

/// Sets up the session situation: `pam` (new session keyring with @u linked, as
/// pam_keyinit does), `fresh` (new empty session keyring, as systemd's
/// KeyringMode=private), `none` (whatever was inherited: no session keyring).
func enterSession(_ mode: String) throws {
    switch mode {
    case "pam":
        _ = try KeySerial.joinSessionKeyring()
        try KeySerial.userKeyring.link(into: .sessionKeyring)
    case "fresh":
        _ = try KeySerial.joinSessionKeyring()
    default:
        break
    }
}

func itemKey(_ text: String) throws -> KeyringItemKey {
    guard let key = KeyringItemKey(keyDescription: text) else { throw KeyringErrno.invalidArgument }
    return key
}

/// Runs a program and returns its exit status (the child inherits our keyrings as fork+exec does).
func spawn(_ argv: [String]) -> Int32 {
    var pid: pid_t = 0
    var cArgs = argv.map { strdup($0) } + [nil]
    defer { cArgs.forEach { free($0) } }
    guard posix_spawnp(&pid, argv[0], nil, nil, &cArgs, environ) == 0 else { return -1 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status >> 8) & 0xff
}

let args = Array(CommandLine.arguments.dropFirst())
let command = args.first ?? ""
let rest = Array(args.dropFirst())
func arg(_ i: Int) -> String { i < rest.count ? rest[i] : "" }
func serial(_ i: Int) -> KeySerial { KeySerial(rawValue: Int32(arg(i)) ?? 0) }

var status: Int32 = 2
switch command {
case "read":  // read <pam|fresh|none> <description>
    status = report {
        try enterSession(arg(0))
        let secret = hex(try KeyringReader().read(try itemKey(arg(1))))
        if arg(0) == "none" {
            // A process without a session keyring gets the user-session keyring on
            // first use of @s; anything else means one was inherited, and the
            // "no session" case was not what ran.
            let session = try KeySerial.sessionKeyring.resolve()
            let userSession = try KeySerial.userSessionKeyring.resolve()
            guard session == userSession else { return secret + " (inherited a session keyring)" }
        }
        return secret
    }
case "service-read":  // service-read <description>
    status = report {
        try enterSession("fresh")
        return hex(try KeyringReader(includesPersistentKeyring: true).read(try itemKey(arg(0))))
    }
case "service-serial":  // service-serial <description>: the key's serial, found as service-read finds it
    status = report {
        try enterSession("fresh")
        return String(try KeyringReader(includesPersistentKeyring: true).find(try itemKey(arg(0))).rawValue)
    }
case "search":  // search <keyring serial> <type> <description>
    status = report { String(try serial(0).search(type: arg(1), description: arg(2)).rawValue) }
case "read-serial":
    status = report { hex(try serial(0).read()) }
case "describe":
    status = report { try serial(0).describe().description }
case "link":  // link <key> <keyring serial or u/s/p>
    status = report {
        let target: KeySerial = arg(1) == "u" ? .userKeyring : arg(1) == "s" ? .sessionKeyring : serial(1)
        try serial(0).link(into: target)
        return "linked"
    }
case "setperm":
    status = report {
        try serial(0).setPermissions([.possessorAll, .userAll, .groupAll, .otherAll])
        return "set"
    }
case "update":
    status = report {
        try serial(0).update(try SecretBytes.random(count: 8))
        return "updated"
    }
case "watch-ring":  // watch-ring <seconds> <expected count>: list arca:wu in a loop
    status = report {
        let deadline = Clock.monotonicSeconds() + (Double(arg(0)) ?? 1)
        let expected = Int(arg(1)) ?? 0
        var rounds = 0
        var bad = 0
        var vanished = 0
        while Clock.monotonicSeconds() < deadline {
            rounds += 1
            do {
                let ring = try KeySerial.userKeyring.search(type: "keyring", description: "arca:wu")
                let count = try ring.links().count
                if count != expected { bad += 1 }
            } catch {
                // The old ring was retired between search and read: that is allowed.
                vanished += 1
            }
        }
        return "rounds=\(rounds) partial=\(bad) vanished=\(vanished)"
    }
case "read-many":  // read-many <pam|fresh|none> <service> <count>: accounts a0… hold "secret-a<i>"
    status = report {
        try enterSession(arg(0))
        let reader = KeyringReader()
        let count = Int(arg(2)) ?? 0
        var mismatched = 0
        for i in 0..<count {
            let account = "a\(i)"
            let key = KeyringItemKey.genericPassword(GenericPasswordKey(service: arg(1), account: account))
            var expected = Array("secret-\(account)".utf8)
            if try reader.read(key) != (try SecretBytes(consuming: &expected)) { mismatched += 1 }
        }
        return "read=\(count) mismatched=\(mismatched)"
    }
case "percolate":  // percolate <description>: read, then fork+exec keyctl searches
    status = report {
        try enterSession("fresh")
        _ = try KeyringReader().read(try itemKey(arg(0)))
        let viaProcess = spawn(["keyctl", "search", "@p", "user", arg(0)])
        let viaSession = spawn(["keyctl", "search", "@s", "user", arg(0)])
        return "process=\(viaProcess) session=\(viaSession)"
    }
case "fill-quota":  // fill-quota: as a plain user, add keys to a fresh session until the kernel refuses
    status = report {
        let session = try KeySerial.joinSessionKeyring()
        defer { try? session.clear() }
        let payload = try SecretBytes.random(count: 16)
        for i in 0..<1_000 {
            _ = try KeySerial.add(type: "user", description: "fill\(i)", payload: payload, to: session)
        }
        return "never refused"
    }
case "install":  // install <uid> <whenUnlocked|afterFirstUnlock> <description> (secret on stdin); as root
    status = report {
        guard let uid = UInt32(arg(0)), let itemClass = KeyringClass(rawValue: arg(1)) else {
            throw KeyringErrno.invalidArgument
        }
        var bytes: [UInt8] = []
        while let line = readLine(strippingNewline: true) { bytes += Array(line.utf8) }
        let item = KeyringItem(key: try itemKey(arg(2)), secret: try SecretBytes(consuming: &bytes))
        let loaded = try KeyringLayout().install(user: uid, class: itemClass, items: [item])
        return "loaded=\(loaded.loaded) ring=\(loaded.ring.rawValue)"
    }
case "remove":  // remove <uid> <class>; as root
    status = report {
        guard let uid = UInt32(arg(0)), let itemClass = KeyringClass(rawValue: arg(1)) else {
            throw KeyringErrno.invalidArgument
        }
        return "removed=\(try KeyringLayout().remove(user: uid, class: itemClass))"
    }
case "grant":  // grant <uid> <description> (secret on stdin); as root
    status = report {
        guard let uid = UInt32(arg(0)) else { throw KeyringErrno.invalidArgument }
        var bytes: [UInt8] = []
        while let line = readLine(strippingNewline: true) { bytes += Array(line.utf8) }
        let item = KeyringItem(key: try itemKey(arg(1)), secret: try SecretBytes(consuming: &bytes))
        return "loaded=\(try KeyringLayout().grant(uid: uid, items: [item]).loaded)"
    }
case "purge":  // purge <uid>; as root
    status = report {
        guard let uid = UInt32(arg(0)) else { throw KeyringErrno.invalidArgument }
        let purged = KeyringLayout().purge(user: uid)
        guard purged.isComplete else { throw KeyringError.notDestroyed(remaining: purged.notDestroyed) }
        return "purged"
    }
default:
    print(
        "usage: arca-keyring-probe read|service-read|service-serial|search|read-serial|describe|link|setperm|update|watch-ring|percolate …"
    )
}
exit(status)
