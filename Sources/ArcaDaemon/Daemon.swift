import ArcaCrypto
import ArcaProtocol
import ArcaVault
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// arcad's request logic: authorization from the peer's credentials, the vaults,
/// the lock-state machines, and what goes into the kernel.
///
/// Authorization (ARCHITECTURE §2): a user acts only on their own vault; root (the
/// PAM stack of login, sshd…) may act for any uid. A refusal is the same
/// `errSecMissingEntitlement` whether or not the other user or vault exists.
// @unchecked: every stored property is immutable, a Mutex/Atomic, or a type that locks itself.
public final class Daemon: RequestHandling, @unchecked Sendable {
    /// `arcad --version` output.
    public static var versionLine: String { "arcad \(ArcaVersion.release)" }

    let config: DaemonConfig
    let kernel: any KernelPublishing
    /// Vault parameters for new vaults are measured once, lazily.
    let calibrated = Mutex<KDFParameters?>(nil)
    private let users = Mutex<[UInt32: UserContext]>([:])
    private let sessionNumbers = Atomic<UInt64>(1)
    /// The host secret for ThisDeviceOnly classes (`<state>/host.key`).
    let hostSecret: SecretBytes?
    /// The system vault, unlocked with the host key at start.
    let system: SystemContext
    /// Per-user event streams (lock changes, item changes) for `arca-secretd`.
    let events = EventHub()
    /// Backups moving in chunks between arcad and `arca export`/`import`.
    let staging: BackupStaging
    /// Where vaults' KDF parameters are published for pam_arca (KDFPublication.swift).
    let publication: KDFPublication?

    /// The most Argon2id passes a vault may ask for.
    static let maximumOpsLimit: UInt64 = 32
    /// Argon2id derivations arcad runs at once (each takes up to 1 GiB), at most
    /// one per uid, queued fairly across uids.
    let derivations = DerivationQueue(slots: Daemon.maximumDerivations, waitingPerUID: Daemon.maximumWaitingPerUID)
    static let maximumDerivations = 2
    /// Derivations one uid may have waiting beyond its running one; more are refused (busy).
    static let maximumWaitingPerUID = 4

    /// A daemon over `config.stateDirectory`, publishing to `kernel`; with
    /// `publishesParameters`, vaults' KDF parameters go next to the socket for pam_arca.
    public init(config: DaemonConfig, kernel: (any KernelPublishing)? = nil, publishesParameters: Bool = false) throws {
        self.config = config
        publication = publishesParameters ? KDFPublication(socketPath: config.socketPath) : nil
        staging = BackupStaging(
            perUserLimit: config.backupStagingBytes, totalLimit: config.backupStagingTotalBytes,
            idleSeconds: Double(config.backupStagingIdleSeconds))
        self.kernel = kernel ?? KernelKeyring(budget: config.kernelBudget, stateDirectory: config.stateDirectory)
        try StateDirectory.prepare(config.stateDirectory)
        let host = try StateDirectory.hostSecret(in: config.stateDirectory)
        hostSecret = host
        system = try SystemContext.open(directory: config.stateDirectory, hostSecret: host)
    }

    // MARK: Dispatch

    public func handle(_ request: inout Request, from peer: PeerCredentials) -> Reply {
        if config.idleTimeout > 0 { touch(peer.uid) }
        do {
            guard let uid = Self.keyChecked(by: request) else {
                return syncAfter(request, reply: try dispatch(request, peer: peer))
            }
            return syncAfter(
                request,
                reply: try checkingKey(of: uid, peer: peer) { () throws(HandlerError) -> Reply in
                    try dispatch(request, peer: peer)
                })
        } catch {
            return error.reply
        }
    }

    /// Restores users whose keys were parked by a previous arcad (a restart must
    /// not lock anyone out). Their kernel rings survived in the kernel.
    public func restoreParkedKeys() {
        for (uid, keys) in kernel.parkedKeys() {
            let restored = try? context(uid).withLock { state throws(HandlerError) -> Bool in
                guard let vault = try self.vault(of: state) else { return false }
                do {
                    let classes = try vault.unlock(heldKeys: keys)
                    state.lock.restore(loaded: Set(classes.map(ItemMapping.kernelClass)))
                    return true
                } catch {
                    return false
                }
            }
            if restored == true {
                Log.notice("uid \(uid): unlocked state restored from parked keys")
            } else {
                kernel.park(uid: uid, keys: nil)
            }
        }
    }

    /// Records activity of a user, for the idle timeout.
    func touch(_ uid: UInt32) {
        let now = Clock.monotonicSeconds()
        try? context(uid).withLock { state throws(HandlerError) in state.lastActivity = now }
    }

    /// Locks whenUnlocked of users idle for longer than `idle_timeout`. Called
    /// periodically by arcad's timer thread.
    public func expireIdleUsers() {
        guard config.idleTimeout > 0 else { return }
        let deadline = Clock.monotonicSeconds() - Double(config.idleTimeout)
        for context in allContexts() {
            try? context.withLock { state throws(HandlerError) in
                guard state.lastActivity < deadline, let vault = state.vault else { return }
                let effects = state.lock.idle()
                if !effects.isEmpty { Log.info("uid \(state.uid): idle, whenUnlocked removed") }
                apply(effects, to: state, vault: vault)
            }
        }
    }

    private func dispatch(_ request: Request, peer: PeerCredentials) throws(HandlerError) -> Reply {
        switch request {
        case .status(let uid):
            return try status(uid: uid ?? peer.uid, peer: peer)
        case .kdfParameters(let uid):
            return try kdfParameters(uid: uid, peer: peer)
        case .unlock(let uid, let key):
            return try unlock(uid: uid, key: try secretCopy(key), peer: peer)
        case .enroll(let uid, let key, let parameters):
            return try enroll(uid: uid, key: try secretCopy(key), parameters: try kdf(parameters, peer), peer: peer)
        case .openSession(let opening):
            return try openSession(opening, peer: peer)
        case .closeSession(let uid, let token):
            return try closeSession(uid: uid, token: token, peer: peer)
        case .lock(let uid, let classes):
            return try lock(uid: uid, classes: classes, peer: peer)
        case .lockAll:
            return try lockAll(peer: peer)
        case .unlockWithPassword(let uid, let password):
            return try unlockWithPassword(uid: uid, password: try secretCopy(password), peer: peer)
        case .add(let add):
            return try self.add(add, peer: peer)
        case .copyMatching(let vault, let query):
            return try copyMatching(vault: vault, query: query, peer: peer)
        case .update(let update):
            return try self.update(update, peer: peer)
        case .delete(let vault, let query):
            return try delete(vault: vault, query: query, peer: peer)
        case .changePassword(let uid, let oldKey, let newKey, let parameters):
            return try changePassword(
                uid: uid, oldKey: try secretCopy(oldKey), newKey: try secretCopy(newKey),
                parameters: try kdf(parameters, peer), peer: peer)
        case .passwordReset(let uid, let newKey, let parameters):
            return try passwordReset(
                uid: uid, newKey: try secretCopy(newKey), parameters: try kdf(parameters, peer), peer: peer)
        case .recover(let uid, let recoveryKey, let newKey, let parameters):
            return try recover(
                uid: uid, recoveryText: try secretCopy(recoveryKey), newKey: try secretCopy(newKey),
                parameters: try kdf(parameters, peer), peer: peer)
        case .rotateRecoveryKey(let uid, let key):
            return try rotateRecoveryKey(uid: uid, key: try secretCopy(key), peer: peer)
        case .listSessions:
            return try listSessions(peer: peer)
        case .grant(let query, let principals):
            return try changeGrants(query, principals, adding: true, peer: peer)
        case .revokeGrant(let query, let principals):
            return try changeGrants(query, principals, adding: false, peer: peer)
        case .listGrants:
            return try listGrants(peer: peer)
        case .addAttributeItem(let add):
            return try addAttributeItem(add, peer: peer)
        case .searchAttributeItems(let uid, let attributes, let returnSecrets):
            return try searchAttributeItems(uid: uid, attributes, returnSecrets: returnSecrets, peer: peer)
        case .getAttributeItems(let uid, let references, let returnSecrets):
            return try getAttributeItems(uid: uid, references, returnSecrets: returnSecrets, peer: peer)
        case .updateAttributeItem(let update):
            return try updateAttributeItem(update, peer: peer)
        case .deleteAttributeItem(let uid, let reference):
            return try deleteAttributeItem(uid: uid, reference, peer: peer)
        case .waitEvents(let uid, let after, let timeout):
            return try waitEvents(uid: uid, after: after, milliseconds: timeout, peer: peer)
        case .searchAttributeReferences(let uid, let attributes):
            return try searchAttributeReferences(uid: uid, attributes, peer: peer)
        case .collectionSettings(let uid, let label):
            return try collectionSettings(uid: uid, label: label, peer: peer)
        case .loginUnlock(let uid, let key):
            return try loginUnlock(uid: uid, key: try secretCopy(key), peer: peer)
        case .loginUnlockDerived(let uid, let key, let parameters):
            return try loginUnlock(uid: uid, key: try secretCopy(key), derivedWith: parameters, peer: peer)
        case .confirmCandidate(let uid, let candidate, let session):
            return try confirmCandidate(uid: uid, candidate: try secretCopy(candidate), session: session, peer: peer)
        case .exportItems(let uid, let secret, let passphrase):
            return try exportItems(uid: uid, secret: try secretCopy(secret), passphrase: passphrase, peer: peer)
        case .importItems(let uid, let backup, let secret):
            return try importItems(uid: uid, backup: backup, secret: try secretCopy(secret), peer: peer)
        case .syncInit(let uid):
            return try syncInit(uid: uid, peer: peer)
        case .syncRecover(let uid, let files, let secret):
            return try syncRecover(uid: uid, files: files, secret: try secretCopy(secret), peer: peer)
        case .stageExport(let uid, let secret, let passphrase):
            return try stageExport(uid: uid, secret: try secretCopy(secret), passphrase: passphrase, peer: peer)
        case .readExport(let uid, let offset):
            return try readExport(uid: uid, offset: offset, peer: peer)
        case .stageImport(let uid, let total, let offset, let chunk):
            return try stageImport(uid: uid, total: total, offset: offset, chunk: chunk, peer: peer)
        case .importStaged(let uid, let secret):
            return try importStaged(uid: uid, secret: try secretCopy(secret), peer: peer)
        case .syncJoin, .syncApprove, .syncPull, .syncPush, .syncRemove, .syncStatus, .syncConflicts, .syncResolve:
            return try syncRequest(request, peer: peer)
        }
    }

    // MARK: Shared helpers

    /// A user acts on their own vault; root on anyone's.
    func authorize(_ peer: PeerCredentials, for uid: UInt32) throws(HandlerError) {
        guard peer.isRoot || peer.uid == uid else { throw HandlerError.notAllowed }
    }

    /// The user's context, created on first use.
    func context(_ uid: UInt32) -> UserContext {
        users.withLock { users in
            if let existing = users[uid] { return existing }
            let created = UserContext(uid: uid, policy: config.lockOn)
            users[uid] = created
            return created
        }
    }

    /// Every user arcad knows, for lock-all and the idle timer.
    func allContexts() -> [UserContext] { users.withLock { Array($0.values) } }

    func vaultPath(_ uid: UInt32) -> String { "\(config.stateDirectory)/users/\(uid).db" }

    /// The user's open vault, opening it on first use; nil if there is none.
    func vault(of state: UserState) throws(HandlerError) -> Vault? {
        if let vault = state.vault { return vault }
        let path = vaultPath(state.uid)
        guard try StateDirectory.existingFile(path) else { return nil }
        do {
            let vault = try Vault.open(at: path)
            state.vault = vault
            publishParameters(uid: state.uid, of: vault)
            return vault
        } catch {
            throw HandlerError.vault(error)
        }
    }

    func requireVault(of state: UserState) throws(HandlerError) -> Vault {
        guard let vault = try vault(of: state) else { throw HandlerError.noVault }
        return vault
    }

    func nextSessionNumber() -> UInt64 { sessionNumbers.wrappingAdd(1, ordering: .relaxed).oldValue }

    private func kdf(_ p: KeyDerivationParameters, _ peer: PeerCredentials) throws(HandlerError) -> KDFParameters {
        guard let memory = Int(exactly: p.memoryLimit) else { throw .param("KDF memory limit out of range") }
        let parameters = KDFParameters(opsLimit: p.opsLimit, memoryLimit: memory, salt: p.salt)
        do { try parameters.validate() } catch { throw .param("\(error)") }
        guard memory >= KDFParameters.memoryFloor else {
            throw .param("Argon2id memory must be at least \(KDFParameters.memoryFloor >> 20) MiB")
        }
        // arcad runs Argon2id for `unlockWithPassword`, and so does every login: a
        // vault's cost must stay what calibration could have chosen here.
        guard memory <= Argon2id.memoryCeiling(), p.opsLimit <= Self.maximumOpsLimit else {
            throw .param(
                "Argon2id cost above what this machine allows (at most \(Argon2id.memoryCeiling() >> 20) MiB, "
                    + "\(Self.maximumOpsLimit) passes)")
        }
        // A user's own request sets the cost arcad pays at each `arca unlock`: it
        // stays under arca.conf's kdf_max_cost. The login stack (root) sends what
        // pam_arca calibrated on this machine.
        if !peer.isRoot { try checkCost(parameters) }
        return parameters
    }

    /// Refuses a cost (passes × MiB) above arca.conf's `kdf_max_cost`.
    func checkCost(_ parameters: KDFParameters) throws(HandlerError) {
        let cost = parameters.opsLimit.multipliedReportingOverflow(by: UInt64(parameters.memoryLimit >> 20))
        guard !cost.overflow, cost.partialValue <= UInt64(config.kdfMaxCost) else {
            throw .param("Argon2id cost above kdf_max_cost (passes × MiB at most \(config.kdfMaxCost); arca.conf(5))")
        }
    }
}
