import ArcaClient
import ArcaCrypto
import ArcaProtocol
import CPAM
import Foundation

@testable import ArcaPAM

/// An in-memory PAM handle.
final class FakeContext: PAMContext {
    var items: [PAMTextItem: String] = [.service: "login", .user: "alice"]
    var secrets: [PAMSecretItem: String] = [:]
    var users: [String: UInt32] = ["alice": 1000]
    var effectiveUID: UInt32 = 0
    var data: [String: SecretBytes] = [:]
    var logs: [String] = []
    var failStash = false

    func item(_ item: PAMTextItem) -> String? { items[item] }
    func secretItem(_ item: PAMSecretItem) -> SecretBytes? {
        guard let text = secrets[item], !text.isEmpty else { return nil }
        var bytes = Array(text.utf8)
        return try? SecretBytes(consuming: &bytes)
    }
    func uid(ofUser name: String) -> UInt32? { users[name] }
    func stash(_ value: SecretBytes, name: String) -> Bool {
        guard !failStash else { return false }
        data[name] = try? value.copy()
        return true
    }
    func stashed(name: String) -> SecretBytes? { try? data[name]?.copy() }
    func removeStash(name: String) { data[name] = nil }
    func log(_ priority: LogPriority, _ message: String) { logs.append("\(priority) \(message)") }
}

/// An arcad double that records requests and answers from a script, or from a
/// one-user vault like the recorder's.
final class FakeArcad: ArcadTransport {
    var requests: [Request] = []
    var vault: (parameters: KeyDerivationParameters, key: [UInt8])?
    var failures: [MessageKind: ClientError] = [:]
    var refusals: [MessageKind: ArcaStatus] = [:]
    /// What a failed login unlock returns as the candidate token.
    let candidateToken = [UInt8](repeating: 0xC7, count: 32)
    /// How often the module calibrated Argon2id (through ``module(_:_:_:)``).
    var calibrations = 0
    /// For each ``disconnect()``: how many requests had been sent before it.
    var disconnects: [Int] = []

    /// For each pair sent in one round trip (``send(_:then:)``): the index of its first request.
    var pairs: [Int] = []

    func disconnect() { disconnects.append(requests.count) }

    /// Like the socket: both requests are sent (and recorded) whatever happens to the
    /// first; a failure of the first is thrown, one of the second returned with the first's reply.
    func send(_ first: Request, then second: Request) throws(ClientError) -> ReplyPair {
        pairs.append(requests.count)
        let reply: Result<Reply, ClientError>
        do {
            reply = .success(try send(first))
        } catch {
            reply = .failure(error)
        }
        let secondReply: ReplyPair.Second
        do {
            secondReply = .replied(try send(second))
        } catch {
            secondReply = .failed(error)
        }
        return ReplyPair(first: try reply.get(), second: secondReply)
    }

    func send(_ request: Request) throws(ClientError) -> Reply {
        requests.append(request)
        if let error = failures[request.kind] { throw error }
        if let status = refusals[request.kind] { return .error(status: status, message: "scripted") }
        switch request {
        case .kdfParameters: return .kdfParameters(vault?.parameters)
        case .unlock(_, let key): return vault?.key == key ? .ok : .error(status: .authFailed, message: "wrong key")
        case .loginUnlock(_, let key): return vault?.key == key ? .ok : .candidate(token: candidateToken)
        case .loginUnlockDerived(_, let key, let parameters):
            // Like arcad: parameters other than the vault's are stale, whatever the key.
            if let vault, vault.parameters != parameters { return .staleParameters(vault.parameters) }
            return vault?.key == key ? .ok : .candidate(token: candidateToken)
        case .enroll(_, let key, let parameters):
            vault = (parameters, key)
            return .recoveryKey(Array("RECOVERY".utf8))
        case .changePassword(_, let old, let new, let parameters):
            guard vault?.key == old else { return .error(status: .authFailed, message: "wrong old key") }
            vault = (parameters, new)
            return .ok
        case .openSession, .closeSession, .passwordReset, .confirmCandidate: return .ok
        default: return .error(status: .param, message: "unsupported")
        }
    }

    /// "kind uid" per request, the shape the tests compare.
    var kinds: [String] { requests.map { "\($0.kind)" } }
}

/// Cheap Argon2id parameters so that tests stay fast.
let cheap = KDFParameters(opsLimit: 1, memoryLimit: 64 << 10, salt: [UInt8](repeating: 1, count: 16))
let cheapWire = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 10, salt: [UInt8](repeating: 2, count: 16))

func key(_ password: String, _ p: KeyDerivationParameters) throws -> [UInt8] {
    var bytes = Array(password.utf8)
    let secret = try SecretBytes(consuming: &bytes)
    let derived = try Argon2id.deriveKey(
        password: secret, parameters: KDFParameters(opsLimit: p.opsLimit, memoryLimit: Int(p.memoryLimit), salt: p.salt)
    )
    return derived.withUnsafeBytes { Array($0) }
}

/// A socket path in a directory that does not exist, for modules not given one: auth reads
/// `<socket>.kdf/<uid>` first, and the default (/run/arca/arcad.sock) could hold a real arcad's
/// copy for uid 1000 on the machine running the tests.
let absentSocket = NSTemporaryDirectory() + "arca-pam-tests-" + UUID().uuidString + "/sock"

func module(_ context: FakeContext, _ arcad: FakeArcad, _ arguments: [String] = []) -> PAMModule {
    let options = arguments.contains { $0.hasPrefix("socket=") } ? arguments : arguments + ["socket=\(absentSocket)"]
    return PAMModule(
        context: context, options: ModuleOptions.parse(options).options, transport: arcad,
        calibrate: {
            arcad.calibrations += 1
            return cheap
        })
}

let ignore = PAMResult.ignore
let success = PAMResult.success
