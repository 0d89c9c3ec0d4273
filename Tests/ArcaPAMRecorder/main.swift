// arca-test-arcad-recorder: a stand-in for arcad that pam_arca.so talks to in
// tests and in bench/pam. It keeps one user's vault in memory (KDF parameters
// and key), answers like arcad would, and appends one line per request to a
// record file, so a test can assert the exact sequence a PAM flow sends:
//
//   <kind> uid=<uid> peer=<peer uid> [fields] -> <reply>
//
// Keys are shown as the first 8 hex digits of their BLAKE2b hash, never raw.
// Not installed; test use only.
import ArcaCrypto
import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    usage: arca-test-arcad-recorder --socket PATH --record FILE [--password PW] [--ops N] [--memory BYTES]
                                    [--fail KIND=STATUS]... [--hang KIND]... [--close KIND]... [--recovery]
      --password PW      start with a vault unlocked by PW (else: no vault, the module enrolls)
      --ops/--memory     Argon2id cost of that vault (default 1 pass, 64 KiB: tests stay fast)
      --fail KIND=S      answer KIND (e.g. unlock) with error status S
      --hang KIND        never answer KIND ("all": any request)
      --close KIND       close the connection instead of answering KIND
      --recovery         answer enroll with a recovery key instead of ok
    arca-test-arcad-recorder --kdf-bench
      calibrate Argon2id as pam_arca does at enrollment, print "ops memory median_ms" of 5 derivations
    """

struct Config {
    var socket = ""
    var record = ""
    var password: String?
    var ops: UInt64 = 1
    var memory = 64 << 10
    var fail: [String: Int32] = [:]
    var hang: Set<String> = []
    var close: Set<String> = []
    var recovery = false
}

func die(_ message: String) -> Never {
    try? FileDescriptor.standardError.writeAll("arca-test-arcad-recorder: \(message)\n\(usage)\n")
    exit(2)
}

func parseArguments() -> Config {
    var config = Config()
    var arguments = CommandLine.arguments.dropFirst()
    func value(_ name: String) -> String {
        guard let next = arguments.popFirst() else { die("\(name) needs a value") }
        return next
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--socket": config.socket = value(argument)
        case "--record": config.record = value(argument)
        case "--password": config.password = value(argument)
        case "--ops": config.ops = UInt64(value(argument)) ?? 1
        case "--memory": config.memory = Int(value(argument)) ?? (64 << 10)
        case "--fail":
            let spec = value(argument).split(separator: "=")
            guard spec.count == 2, let status = Int32(spec[1]) else { die("--fail wants KIND=STATUS") }
            config.fail[String(spec[0])] = status
        case "--hang": config.hang.insert(value(argument))
        case "--close": config.close.insert(value(argument))
        case "--recovery": config.recovery = true
        case "--help":
            print(usage)
            exit(0)
        default: die("unknown argument \(argument)")
        }
    }
    if config.socket.isEmpty || config.record.isEmpty { die("--socket and --record are required") }
    return config
}

func fingerprint(_ bytes: [UInt8]) -> String {
    let hash = (try? KeyedHash.blake2b(bytes, outputLength: 16)) ?? []
    return hash.prefix(4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// The one vault this fake keeps.
struct Vault {
    var parameters: KeyDerivationParameters
    var keyPrint: String
}

final class Recorder {
    let config: Config
    var vault: Vault?
    var pendingReset: Vault?
    var sessions: Set<String> = []
    /// Fingerprints of the candidate tokens handed out and not yet confirmed.
    var candidates: Set<String> = []
    let recordFD: Int32

    init(config: Config) {
        self.config = config
        recordFD = open(config.record, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        if recordFD < 0 { die("cannot open \(config.record)") }
        if let password = config.password {
            let salt = [UInt8](repeating: 7, count: 16)
            let parameters = KeyDerivationParameters(
                opsLimit: config.ops, memoryLimit: UInt64(config.memory), salt: salt)
            vault = Vault(parameters: parameters, keyPrint: Recorder.derivePrint(password, parameters))
        }
    }

    static func derivePrint(_ password: String, _ p: KeyDerivationParameters) -> String {
        var bytes = Array(password.utf8)
        guard let secret = try? SecretBytes(consuming: &bytes),
            let key = try? Argon2id.deriveKey(
                password: secret,
                parameters: KDFParameters(opsLimit: p.opsLimit, memoryLimit: Int(p.memoryLimit), salt: p.salt))
        else { die("cannot derive the initial vault key") }
        return fingerprint(key.withUnsafeBytes { Array($0) })
    }

    func record(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(recordFD, $0, strlen($0)) }
    }

    enum Action {
        case reply(Reply, String)
        case hang
        case close
    }

    func handle(_ request: Request, peer: UInt32) -> (String, Action) {
        let name = "\(request.kind)"
        var fields: [String] = []
        var action: Action
        switch request {
        case .kdfParameters(let uid):
            fields.append("uid=\(uid)")
            if let vault {
                action = .reply(.kdfParameters(vault.parameters), "params")
            } else {
                action = .reply(.kdfParameters(nil), "none")
            }
        case .unlock(let uid, let key):
            let print = fingerprint(key)
            fields += ["uid=\(uid)", "key=\(print)"]
            if let vault {
                action = vault.keyPrint == print ? .reply(.ok, "ok") : refuse(.authFailed, "wrong key")
            } else {
                action = refuse(.itemNotFound, "no vault")
            }
        case .loginUnlock(let uid, let key):
            let print = fingerprint(key)
            fields += ["uid=\(uid)", "key=\(print)"]
            if let vault {
                if vault.keyPrint == print {
                    action = .reply(.ok, "ok")
                } else {
                    let token = SecureRandom.bytes(count: ProtocolLimits.candidateTokenLength)
                    candidates.insert(fingerprint(token))
                    action = .reply(.candidate(token: token), "candidate \(fingerprint(token))")
                }
            } else {
                action = refuse(.itemNotFound, "no vault")
            }
        case .confirmCandidate(let uid, let candidate, let session):
            let print = fingerprint(candidate)
            let sessionPrint = fingerprint(session)
            fields += ["uid=\(uid)", "candidate=\(print)", "session=\(sessionPrint)"]
            action =
                sessions.contains(sessionPrint) && candidates.remove(print) != nil
                ? .reply(.ok, "ok") : refuse(.itemNotFound, "no such candidate")
        case .enroll(let uid, let key, let p):
            let print = fingerprint(key)
            fields += ["uid=\(uid)", "key=\(print)", "ops=\(p.opsLimit)", "mem=\(p.memoryLimit)"]
            if vault != nil {
                action = refuse(.duplicateItem, "vault exists")
            } else {
                vault = Vault(parameters: p, keyPrint: print)
                action =
                    config.recovery
                    ? .reply(.recoveryKey(Array("RECOVERY-TEST-KEY".utf8)), "recoveryKey") : .reply(.ok, "ok")
            }
        case .openSession(let s):
            let print = fingerprint(s.token)
            fields += [
                "uid=\(s.uid)", "token=\(print)", "service=\(s.service)", "tty=\(s.tty ?? "-")",
                "rhost=\(s.remoteHost ?? "-")", "ruser=\(s.remoteUser ?? "-")",
            ]
            sessions.insert(print)
            action = .reply(.ok, "ok")
        case .closeSession(let uid, let token):
            let print = fingerprint(token)
            fields += ["uid=\(uid)", "token=\(print)"]
            action = sessions.remove(print) != nil ? .reply(.ok, "ok") : refuse(.itemNotFound, "no such session")
        case .changePassword(let uid, let oldKey, let newKey, let p):
            let old = fingerprint(oldKey)
            let new = fingerprint(newKey)
            fields += ["uid=\(uid)", "old=\(old)", "new=\(new)", "ops=\(p.opsLimit)", "mem=\(p.memoryLimit)"]
            if let current = vault, current.keyPrint == old {
                fields.append(p.salt == current.parameters.salt ? "salt=same" : "salt=fresh")
                vault = Vault(parameters: p, keyPrint: new)
                action = .reply(.ok, "ok")
            } else {
                action = refuse(.authFailed, "wrong old key")
            }
        case .passwordReset(let uid, let newKey, let p):
            fields += ["uid=\(uid)", "new=\(fingerprint(newKey))", "ops=\(p.opsLimit)", "mem=\(p.memoryLimit)"]
            pendingReset = Vault(parameters: p, keyPrint: fingerprint(newKey))
            action = .reply(.ok, "ok")
        default:
            action = refuse(.param, "not supported by the recorder")
        }
        fields.append("peer=\(peer)")
        if let status = config.fail[name], let code = ArcaStatus(rawValue: status) {
            action = .reply(.error(status: code, message: "scripted failure"), "error \(status)")
        }
        if config.hang.contains(name) || config.hang.contains("all") { action = .hang }
        if config.close.contains(name) || config.close.contains("all") { action = .close }
        return (([name] + fields).joined(separator: " "), action)
    }

    func refuse(_ status: ArcaStatus, _ message: String) -> Action {
        .reply(.error(status: status, message: message), "error \(status.rawValue)")
    }
}

func peerUID(_ fd: Int32) -> UInt32 {
    // struct ucred is pid, uid, gid (Glibc's module map hides it without _GNU_SOURCE).
    var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
    var size = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
    guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return UInt32.max }
    return credentials.1
}

func readExactly(_ fd: Int32, _ count: Int, into buffer: inout [UInt8]) -> Bool {
    var chunk = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let n = chunk.withUnsafeMutableBytes { raw in
            raw.baseAddress.map { read(fd, $0 + filled, count - filled) } ?? -1
        }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        filled += n
    }
    buffer += chunk
    return true
}

/// Serves one connection; returns false when the descriptor must stay open (hang).
func serve(_ fd: Int32, _ recorder: Recorder) -> Bool {
    var buffer: [UInt8] = []
    while true {
        switch Frame.decode(buffer, as: Request.self) {
        case .needMore(let n):
            guard readExactly(fd, n, into: &buffer) else { return true }
        case .invalid(let error):
            recorder.record("invalid-frame \(error)")
            return true
        case .complete(let frame):
            buffer.removeFirst(frame.length)
            let (line, action) = recorder.handle(frame.message, peer: peerUID(fd))
            switch action {
            case .hang:
                recorder.record(line + " -> hang")
                return false
            case .close:
                recorder.record(line + " -> close")
                return true
            case .reply(let reply, let summary):
                recorder.record(line + " -> " + summary)
                guard let bytes = try? Frame.encode(reply, requestID: frame.requestID) else { return true }
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }
}

func kdfBench() -> Never {
    do {
        let parameters = try Argon2id.calibrate(targetSeconds: 0.25)
        var samples: [Double] = []
        for _ in 0..<5 { samples.append(try Argon2id.measure(parameters)) }
        samples.sort()
        print("\(parameters.opsLimit) \(parameters.memoryLimit) \(Int((samples[2] * 1000).rounded()))")
        exit(0)
    } catch {
        die("calibration failed: \(error)")
    }
}

if CommandLine.arguments.dropFirst().first == "--kdf-bench" { kdfBench() }
let config = parseArguments()
let recorder = Recorder(config: config)
signal(SIGPIPE, SIG_IGN)
let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
var address = sockaddr_un()
address.sun_family = sa_family_t(AF_UNIX)
let pathBytes = Array(config.socket.utf8)
guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { die("socket path too long") }
withUnsafeMutableBytes(of: &address.sun_path) { raw in
    raw.copyBytes(from: pathBytes)
    raw[pathBytes.count] = 0
}
unlink(config.socket)
let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
}
guard bound == 0, listen(listener, 64) == 0 else { die("cannot listen on \(config.socket)") }
chmod(config.socket, 0o666)
recorder.record("listening")
var hung: [Int32] = []
while true {
    let fd = accept(listener, nil, nil)
    if fd < 0 { continue }
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    if serve(fd, recorder) { close(fd) } else { hung.append(fd) }
}
