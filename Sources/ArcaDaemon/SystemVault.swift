import ArcaCrypto
import ArcaVault
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The system vault (`<state>/system.db`) and what arcad last delivered from it.
final class SystemState {
    let vault: Vault
    /// The uids whose persistent keyring holds an `arca:svc` ring from us.
    var delivered: Set<UInt32> { Set(deliveredKeys.keys) }
    /// What each of them was given (key descriptions), to notice a group gaining
    /// or losing a member between two changes of the vault.
    var deliveredKeys: [UInt32: Set<String>] = [:]

    init(vault: Vault) { self.vault = vault }
}

/// The system vault behind one lock: every system request and every delivery
/// runs inside `withLock`, so the kernel always reflects one state of the vault.
// @unchecked: the vault and kernel state are touched only inside `withLock`.
final class SystemContext: @unchecked Sendable {
    // `state` is only touched inside `withLock`, which holds `mutex`.
    private let mutex = Mutex(())
    private let state: SystemState

    init(state: SystemState) { self.state = state }

    func withLock<R>(_ body: (SystemState) throws(HandlerError) -> R) throws(HandlerError) -> R {
        try mutex.withLock { _ throws(HandlerError) -> R in try body(state) }
    }

    /// Opens `<directory>/system.db`, creating it on first start, and unlocks it
    /// with a key derived from the host secret. No password exists for it, so
    /// Argon2id is never run: the stored KDF parameters are valid (the vault
    /// format requires them) but describe no password.
    static func open(directory: String, hostSecret: SecretBytes) throws(HandlerError) -> SystemContext {
        let path = "\(directory)/system.db"
        do {
            let key = try SubkeyDerivation.derive(from: hostSecret, label: "arca.system-vault.v1")
            if try !StateDirectory.existingFile(path) {
                try create(path, directory: directory, key: key, hostSecret: hostSecret)
                Log.notice("created the system vault \(path)")
            }
            let vault = try Vault.open(at: path)
            try vault.unlock(derivedKey: key, hostSecret: hostSecret)
            return SystemContext(state: SystemState(vault: vault))
        } catch let error as HandlerError {
            throw error
        } catch let error as VaultError {
            throw HandlerError.vault(error)
        } catch {
            throw HandlerError(.notAvailable, "cannot open the system vault: \(error)")
        }
    }

    /// Creates the vault under a temporary name, closes it (SQLite folds its WAL
    /// into the file), then renames it into place and syncs the directory: a crash
    /// during the first start leaves no system.db or a whole one, never a half-made
    /// file that would stop every later start.
    private static func create(_ path: String, directory: String, key: SecretBytes, hostSecret: SecretBytes) throws {
        let temporary = path + ".new"
        let leftovers = ["", "-wal", "-shm", "-journal"].map { temporary + $0 }
        for file in leftovers { try FileSystem.removeIfPresent(file) }
        let parameters = KDFParameters(
            opsLimit: 1, memoryLimit: KDFParameters.memoryFloor,
            salt: SecureRandom.bytes(count: KDFParameters.saltLength))
        do {
            _ = try Vault.create(at: temporary, derivedKey: key, kdfParameters: parameters, hostSecret: hostSecret)
        }  // released here: the connection closes and the WAL is checkpointed and removed
        guard try FileSystem.status(path: temporary + "-wal") == nil else {
            throw HandlerError(.notAvailable, "cannot create \(path): SQLite kept a write-ahead log")
        }
        try FileSystem.syncFile(temporary)
        try FileSystem.rename(temporary, path)
        try FileSystem.syncDirectory(directory)
    }
}
