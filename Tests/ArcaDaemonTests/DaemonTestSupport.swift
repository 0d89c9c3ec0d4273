import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArcaDaemon

/// The in-memory twin of the kernel keyring: what arcad would have installed.
final class RecordingKernel: KernelPublishing, Sendable {
    private let rings = Mutex<[String: [String: [UInt8]]]>([:])
    /// While true, removals fail and leave the ring in place (a kernel that refuses).
    let removalsFail = Atomic<Bool>(false)
    /// While true, installs fail and the old ring cannot be destroyed either.
    let installsFail = Atomic<Bool>(false)

    /// While true, puts answer `.reinstall` (a ring changed under arcad).
    let putsReinstall = Atomic<Bool>(false)
    /// While true, drops fail and leave the key in place.
    let dropsFail = Atomic<Bool>(false)
    private let log = Mutex<[String]>([])
    /// Every install, put and drop, in order: "install <class>", "put <class> <description>",
    /// "drop <class> <description>" (class as its raw value).
    var calls: [String] { log.withLock { $0 } }
    func clearCalls() { log.withLock { $0 = [] } }

    func install(uid: UInt32, class kernelClass: KernelClass, items: [KeyringItem]) -> InstallResult {
        log.withLock { $0.append("install \(kernelClass.rawValue)") }
        if installsFail.load(ordering: .relaxed) { return InstallResult(notLoaded: items.count, oldKeysRemain: true) }
        var ring: [String: [UInt8]] = [:]
        var notLoaded = 0
        for item in items {
            guard item.secret.count <= KeyringLayout.maximumPayload else {
                notLoaded += 1
                continue
            }
            ring[item.key.keyDescription] = item.secret.withUnsafeBytes { Array($0) }
        }
        rings.withLock { $0["\(uid)/\(kernelClass.rawValue)"] = ring }
        return InstallResult(notLoaded: notLoaded)
    }

    func put(uid: UInt32, class kernelClass: KernelClass, item: KeyringItem) -> PutOutcome {
        log.withLock { $0.append("put \(kernelClass.rawValue) \(item.key.keyDescription)") }
        if putsReinstall.load(ordering: .relaxed) { return .reinstall }
        return rings.withLock { rings in
            let slot = "\(uid)/\(kernelClass.rawValue)"
            guard item.secret.count <= KeyringLayout.maximumPayload else {
                // As the real ring: no older version of the item is left behind.
                rings[slot]?[item.key.keyDescription] = nil
                return .notLoadable
            }
            guard rings[slot] != nil else { return .reinstall }
            rings[slot]?[item.key.keyDescription] = item.secret.withUnsafeBytes { Array($0) }
            return .placed
        }
    }

    func drop(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> DropOutcome {
        log.withLock { $0.append("drop \(kernelClass.rawValue) \(key.keyDescription)") }
        if dropsFail.load(ordering: .relaxed) { return .failed }
        return rings.withLock { rings in
            let slot = "\(uid)/\(kernelClass.rawValue)"
            guard rings[slot] != nil else { return .reinstall }
            return rings[slot]?.removeValue(forKey: key.keyDescription) == nil ? .absent : .dropped
        }
    }

    func holds(uid: UInt32, class kernelClass: KernelClass, key: KeyringItemKey) -> Bool? {
        rings.withLock { $0["\(uid)/\(kernelClass.rawValue)"] }.map { $0[key.keyDescription] != nil }
    }

    private let purgedAccounts = Mutex<[UInt32]>([])
    /// Accounts purged, in order.
    var purged: [UInt32] { purgedAccounts.withLock { $0 } }

    func purge(uid: UInt32) {
        rings.withLock { rings in
            for c in KernelClass.allCases { rings["\(uid)/\(c.rawValue)"] = nil }
        }
        purgedAccounts.withLock { $0.append(uid) }
    }

    func remove(uid: UInt32, class kernelClass: KernelClass) -> Bool {
        if removalsFail.load(ordering: .relaxed) { return false }
        rings.withLock { $0["\(uid)/\(kernelClass.rawValue)"] = nil }
        return true
    }

    private let services = Mutex<[UInt32: [String: [UInt8]]]>([:])

    func grantService(uid: UInt32, items: [KeyringItem]) -> Int {
        var ring: [String: [UInt8]] = [:]
        for item in items { ring[item.key.keyDescription] = item.secret.withUnsafeBytes { Array($0) } }
        services.withLock { $0[uid] = ring }
        return 0
    }

    func revokeService(uid: UInt32) { services.withLock { $0[uid] = nil } }

    /// Parked keys by uid, as bytes: kept here, so a restarted daemon over the same
    /// twin finds them as arcad finds its parked kernel keys.
    private let parked = Mutex<[UInt32: [UInt8]]>([:])

    func park(uid: UInt32, keys: SecretBytes?) {
        let bytes = keys?.withUnsafeBytes { Array($0) }
        parked.withLock { $0[uid] = bytes }
    }

    func parkedKeys() -> [(uid: UInt32, keys: SecretBytes)] {
        parked.withLock { $0 }.sorted { $0.key < $1.key }.compactMap { uid, bytes in
            guard let keys = try? bytes.withUnsafeBytes({ try SecretBytes(copying: $0) }) else { return nil }
            return (uid, keys)
        }
    }

    /// The uids with parked keys.
    var parkedUIDs: [UInt32] { parked.withLock { $0.keys.sorted() } }

    /// A fresh twin holding only this one's parked keys: what a restarted arcad sees
    /// of its own (the tests start from empty rings).
    func afterRestart() -> RecordingKernel {
        let next = RecordingKernel()
        let keys = parked.withLock { $0 }
        next.parked.withLock { $0 = keys }
        return next
    }

    /// The `arca:svc` ring of `uid` (description → secret as text); nil when none.
    func service(_ uid: UInt32) -> [String: String]? {
        services.withLock { $0[uid] }?.mapValues { String(decoding: $0, as: UTF8.self) }
    }

    /// The ring's items (description → secret as text); nil when no ring is installed.
    func ring(_ uid: UInt32, _ c: KernelClass) -> [String: String]? {
        rings.withLock { $0["\(uid)/\(c.rawValue)"] }?.mapValues { String(decoding: $0, as: UTF8.self) }
    }
}

/// A daemon over a temporary state directory, with the kernel twin.
final class TestDaemon: Sendable {
    let directory: String
    let kernel: RecordingKernel
    let daemon: Daemon

    init(
        directory: String? = nil, config base: DaemonConfig = DaemonConfig(),
        kernel: RecordingKernel = RecordingKernel()
    ) throws {
        self.directory =
            directory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("arcad-test-\(UUID().uuidString)").path
        self.kernel = kernel
        var config = base
        config.stateDirectory = self.directory
        daemon = try Daemon(config: config, kernel: kernel)
    }

    /// A second daemon over the same state, finding what the first parked (a restart).
    func restarted() throws -> TestDaemon { try TestDaemon(directory: directory, kernel: kernel.afterRestart()) }

    func send(_ request: Request, as uid: UInt32) -> Reply {
        var request = request
        return daemon.handle(&request, from: PeerCredentials(pid: 1, uid: uid, gid: uid))
    }

    func cleanUp() {
        _ = send(.lockAll, as: 0)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Cheapest parameters arcad accepts (64 MiB, 1 pass), with a fixed salt.
let testParameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("0123456789abcdef".utf8))

/// Enrolls `uid` with the key of `password`; returns the key.
func enrolled(_ t: TestDaemon, _ uid: UInt32, _ password: String = "pw") throws -> [UInt8] {
    let key = try derivedKey(password)
    #expect(t.send(.enroll(uid: uid, key: key, parameters: testParameters), as: 0) == .ok)
    return key
}

/// The key PAM would derive for `password` with `testParameters`.
func derivedKey(_ password: String, salt: [UInt8] = testParameters.salt) throws -> [UInt8] {
    let secret = try Array(password.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    let key = try Argon2id.deriveKey(
        password: secret, parameters: KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: salt))
    return key.withUnsafeBytes { Array($0) }
}

func genp(_ service: String, _ account: String, accessible: ArcaProtocol.Accessibility? = nil) -> AttributeMap {
    var map: AttributeMap = [.service: .string(service), .account: .string(account)]
    if let accessible { map[.accessible] = .accessibility(accessible) }
    return map
}

func addRequest(
    _ uid: UInt32, _ service: String, _ account: String, _ secret: String,
    accessible: ArcaProtocol.Accessibility? = nil
) -> Request {
    .add(
        AddRequest(
            vault: .user(uid: uid), itemClass: .genericPassword,
            attributes: genp(service, account, accessible: accessible), secret: Array(secret.utf8)))
}

func getRequest(_ uid: UInt32, _ service: String, _ account: String) -> Request {
    .copyMatching(
        vault: .user(uid: uid),
        query: Query(
            itemClass: .genericPassword, attributes: genp(service, account), returnFlags: .data))
}

/// The secret of a one-item reply, as text; or the error status.
func secretText(_ reply: Reply) -> String {
    switch reply {
    case .items(let items) where items.count == 1: String(decoding: items[0].data ?? [], as: UTF8.self)
    case .error(let status, _): "error \(status.rawValue)"
    default: "unexpected \(reply)"
    }
}

func statusCode(_ reply: Reply) -> Int32 {
    if case .error(let status, _) = reply { return status.rawValue }
    return 0
}

/// How many of `uid`'s items arcad serves only over the socket (status), or nil.
func itemsNotInKernel(_ t: TestDaemon, _ uid: UInt32) -> Int? {
    guard case .status(let s) = t.send(.status(uid: uid), as: uid) else { return nil }
    return Int(s.itemsNotInKernel)
}
