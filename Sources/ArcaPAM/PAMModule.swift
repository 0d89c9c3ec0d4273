import ArcaClient
import ArcaCrypto
import ArcaProtocol
import CPAM

/// The `pam_sm_*` entry point being run.
public enum PAMEntryKind: Int32, Sendable {
    /// `pam_sm_authenticate`.
    case authenticate = 0
    /// `pam_sm_setcred`.
    case setCredentials = 1
    /// `pam_sm_acct_mgmt`.
    case accountManagement = 2
    /// `pam_sm_open_session`.
    case openSession = 3
    /// `pam_sm_close_session`.
    case closeSession = 4
    /// `pam_sm_chauthtok`.
    case changeAuthToken = 5
}

/// One run of one PAM entry point: reads the handle through a ``PAMContext``,
/// talks to arcad through an ``ArcadTransport``, and returns a ``PAMResult``.
/// It never returns a failure: the worst outcome is `PAM_IGNORE`.
public final class PAMModule {
    /// Marks a handle whose arcad timed out, so later calls of the same
    /// transaction do not wait again.
    static let unreachableName = "arca:unreachable"

    let context: PAMContext
    let options: ModuleOptions
    let transport: ArcadTransport
    let calibrate: () throws -> KDFParameters

    /// A module run. `calibrate` chooses the KDF parameters of a new vault
    /// (tests pass cheap ones).
    public init(
        context: PAMContext, options: ModuleOptions, transport: ArcadTransport,
        calibrate: @escaping () throws -> KDFParameters = { try Argon2id.calibrate(targetSeconds: 0.25) }
    ) {
        self.context = context
        self.options = options
        self.transport = transport
        self.calibrate = calibrate
    }

    /// Runs `kind` and returns its result; failures are logged once.
    public func run(_ kind: PAMEntryKind, flags: Int32) -> PAMResult {
        let service = context.item(.service)
        guard options.applies(to: service) else {
            debug("service \(service ?? "(none)") not in only_if; skipped")
            return .ignore
        }
        do throws(ModuleError) {
            switch kind {
            case .setCredentials, .accountManagement: return .ignore
            case .authenticate: return try authenticate()
            case .openSession: return try openSession()
            case .closeSession: return try closeSession()
            case .changeAuthToken: return try changeAuthToken(flags: flags)
            }
        } catch {
            let outcome = error.outcome
            context.log(outcome.priority, outcome.message)
            return outcome.result
        }
    }

    // MARK: - auth

    private func authenticate() throws(ModuleError) -> PAMResult {
        let (user, uid) = try currentUser()
        guard let password = context.secretItem(.authToken) else {
            debug("no PAM_AUTHTOK for \(user) (key or token login); nothing to do")
            return .ignore
        }
        let unprivileged = context.effectiveUID != 0
        context.removeStash(name: AuthStash.name)
        context.removeStash(name: CandidateStash.name)
        context.removeStash(name: PublishedStash.name)
        // As root, the copy arcad published (PublishedParameters: no connection); else, or
        // when it cannot be believed, arcad's answer. Only a vault that exists is published.
        let published = unprivileged ? nil : PublishedParameters.read(socketPath: options.socketPath, uid: uid)
        let reply: Reply
        if let published {
            debug("KDF parameters from the copy arcad published; no connection in auth")
            reply = .kdfParameters(published)
        } else {
            reply = try send(.kdfParameters(uid: uid))
        }
        let plan: AuthStash.Plan
        switch reply {
        case .kdfParameters(let parameters?):
            let key = try derive(password, try usable(parameters))
            if unprivileged || options.unlockInAuth {
                try unlock(uid: uid, key: key, derivedWith: published, password: password)
                info("unlocked the vault of \(user) in auth")
                plan = .unlockedInAuth
            } else {
                plan = .unlock(key)
                if let published {
                    let kept = try? PublishedStash(uid: uid, parameters: published, password: password).serialized()
                    guard let kept, context.stash(kept, name: PublishedStash.name) else { throw .stashFailed }
                }
            }
        case .kdfParameters(nil):
            guard options.autoEnroll, !unprivileged else {
                debug("\(user) has no vault and enrollment is off here; nothing to do")
                return .ignore
            }
            // Calibrating Argon2id costs most of a second and a quarter of RAM: it
            // waits for open_session, which most sudo or polkit checks never reach.
            plan = .enroll(password: password)
        case let other:
            throw unexpected(other, to: .kdfParameters)
        }
        let serialized: SecretBytes
        do {
            serialized = try AuthStash(uid: uid, plan: plan).serialized()
        } catch {
            throw .crypto("\(error)")
        }
        guard context.stash(serialized, name: AuthStash.name) else { throw .stashFailed }
        if case .enroll = plan {
            debug("\(user) has no vault yet; open_session enrolls")
        } else {
            debug("derived the key of \(user); kept for open_session")
        }
        // auth never vouches for the password: that is the other modules' job.
        return .ignore
    }

    /// Unlocks the vault of `uid` with `key`. As the login stack (root) through
    /// `loginUnlock`: a key arcad refuses comes back with a candidate token, kept
    /// in this handle for its own open_session, the only place that may present it
    /// (pam_arca(8), PASSWORDS CHANGED ELSEWHERE). As the user (a screen locker)
    /// through a plain unlock. `derivedWith`: the published parameters `key` was derived
    /// with, sent along (`loginUnlockDerived`) so that arcad can say they are stale, and then
    /// the key is derived again from `password` (``derivedAgainIfStale(_:uid:password:)``).
    func unlock(
        uid: UInt32, key: SecretBytes, derivedWith published: KeyDerivationParameters? = nil,
        password: SecretBytes? = nil
    ) throws(ModuleError) {
        guard context.effectiveUID == 0 else {
            try expectOK(.unlock(uid: uid, key: key.requestBytes()))
            return
        }
        var reply = try loginUnlockReply(uid: uid, key: key, derivedWith: published, password: password)
        defer { reply.wipeSecrets() }
        try loginUnlocked(reply, uid: uid)
    }

    private func loginUnlockReply(
        uid: UInt32, key: SecretBytes, derivedWith published: KeyDerivationParameters?, password: SecretBytes?
    ) throws(ModuleError) -> Reply {
        guard let published, let password else { return try send(.loginUnlock(uid: uid, key: key.requestBytes())) }
        var reply = try send(.loginUnlockDerived(uid: uid, key: key.requestBytes(), parameters: published))
        defer { reply.wipeSecrets() }
        return try derivedAgainIfStale(reply, uid: uid, password: password)
    }

    /// `reply` (to a `loginUnlockDerived`), or, when arcad says the published parameters
    /// were stale, its reply to a `loginUnlock` with the key derived again from `password`
    /// with the vault's parameters it sent: once, so a login never loops on Arca.
    func derivedAgainIfStale(_ reply: Reply, uid: UInt32, password: SecretBytes) throws(ModuleError) -> Reply {
        guard case .staleParameters(let parameters) = reply else { return reply }
        info("the published KDF parameters were stale; derived the key again with the vault's")
        let key = try derive(password, try usable(parameters))
        return try send(.loginUnlock(uid: uid, key: key.requestBytes()))
    }

    /// What arcad's reply to a `loginUnlock` means: nothing (unlocked), or a failure,
    /// with the candidate token of a refused key kept in this handle.
    func loginUnlocked(_ reply: Reply, uid: UInt32) throws(ModuleError) {
        switch reply {
        case .ok:
            return
        case .candidate(let token):
            let kept = token.withUnsafeBytes { try? SecretBytes(copying: $0) }
            guard let kept, let serialized = try? CandidateStash(uid: uid, token: kept).serialized(),
                context.stash(serialized, name: CandidateStash.name)
            else { throw .stashFailed }
            throw .arcadRefused(request: .loginUnlock, status: .authFailed, message: "wrong password or key")
        case .error(let status, let message):
            throw .arcadRefused(request: .loginUnlock, status: status, message: message)
        case let other:
            throw unexpected(other, to: .loginUnlock)
        }
    }

    // MARK: - password

    private func changeAuthToken(flags: Int32) throws(ModuleError) -> PAMResult {
        guard flags & Int32(PAM_UPDATE_AUTHTOK) != 0 else { return .ignore }
        let (user, uid) = try currentUser()
        guard let newPassword = context.secretItem(.authToken) else {
            debug("no new PAM_AUTHTOK for \(user); nothing to re-wrap")
            return .ignore
        }
        let current: KDFParameters
        switch try send(.kdfParameters(uid: uid)) {
        case .kdfParameters(let parameters?): current = try usable(parameters)
        case .kdfParameters(nil):
            debug("\(user) has no vault; nothing to re-wrap")
            return .ignore
        case let other: throw unexpected(other, to: .kdfParameters)
        }
        // Same cost, fresh salt: a new password never reuses the old salt.
        let fresh = KDFParameters(
            opsLimit: current.opsLimit, memoryLimit: current.memoryLimit,
            salt: SecureRandom.bytes(count: KDFParameters.saltLength))
        let wire = KeyDerivationParameters(
            opsLimit: fresh.opsLimit, memoryLimit: UInt64(fresh.memoryLimit), salt: fresh.salt)
        let newKey = try derive(newPassword, fresh)
        if let oldPassword = context.secretItem(.oldAuthToken) {
            let oldKey = try derive(oldPassword, current)
            try expectOK(
                .changePassword(
                    uid: uid, oldKey: oldKey.requestBytes(), newKey: newKey.requestBytes(), parameters: wire))
            info("re-wrapped the vault of \(user) to the new password")
        } else {
            try expectOK(.passwordReset(uid: uid, newKey: newKey.requestBytes(), parameters: wire))
            info("password of \(user) reset without the old one; arcad re-wraps at the next unlock")
        }
        return .success
    }

    // MARK: - helpers

    func currentUser() throws(ModuleError) -> (String, UInt32) {
        guard let user = context.item(.user), !user.isEmpty else { throw .noUser }
        guard let uid = context.uid(ofUser: user) else { throw .unknownUser(user) }
        return (user, uid)
    }

    // Requests are taken `consuming`, so the temporary a caller builds is moved
    // in, not copied, and the wipe after sending zeroes the only copy.
    func send(_ request: consuming Request) throws(ModuleError) -> Reply {
        try send(&request)
    }

    /// Sends and wipes the request's secrets afterwards. A request built in
    /// place and passed `inout` is uniquely owned, so the wipe is in place.
    func send(_ request: inout Request) throws(ModuleError) -> Reply {
        defer { request.wipeSecrets() }
        return try reaching { () throws(ClientError) -> Reply in try transport.send(request) }
    }

    /// Sends two requests in one round trip (``ArcadTransport/send(_:then:)``) and wipes
    /// their secrets afterwards. Throws when `first` got no reply; otherwise returns it
    /// with `second`'s reply or error, so that the caller acts on `first` (arcad did).
    func send(_ first: inout Request, then second: inout Request) throws(ModuleError) -> RepliedPair {
        defer {
            first.wipeSecrets()
            second.wipeSecrets()
        }
        let replies = try reaching { () throws(ClientError) -> ReplyPair in try transport.send(first, then: second) }
        switch replies.second {
        case .replied(let answer): return RepliedPair(first: replies.first, second: .replied(answer))
        case .failed(let error): return RepliedPair(first: replies.first, second: .failed(unreachable(error)))
        }
    }

    /// Runs `exchange` unless arcad already timed out in this transaction; a timeout
    /// marks the handle, so later calls of the same transaction do not wait again.
    private func reaching<R>(_ exchange: () throws(ClientError) -> R) throws(ModuleError) -> R {
        if context.stashed(name: Self.unreachableName) != nil {
            throw .arcadUnavailable(.timedOut)
        }
        do {
            return try exchange()
        } catch {
            throw unreachable(error)
        }
    }

    /// The module's error for a failed exchange; a timeout marks the handle (``reaching(_:)``).
    private func unreachable(_ error: ClientError) -> ModuleError {
        if error == .timedOut, let marker = try? SecretBytes(count: 1) {
            _ = context.stash(marker, name: Self.unreachableName)
        }
        return .arcadUnavailable(error)
    }

    func expectOK(_ request: consuming Request) throws(ModuleError) {
        let kind = request.kind
        switch try send(&request) {
        case .ok: return
        case .error(let status, let message): throw .arcadRefused(request: kind, status: status, message: message)
        case let other: throw unexpected(other, to: kind)
        }
    }

    func unexpected(_ reply: Reply, to request: MessageKind) -> ModuleError {
        if case .error(let status, let message) = reply {
            return .arcadRefused(request: request, status: status, message: message)
        }
        return .unexpectedReply(request: request, reply: reply.kind)
    }

    func usable(_ parameters: KeyDerivationParameters) throws(ModuleError) -> KDFParameters {
        // arcad is trusted, but a login must not be made to allocate the machine.
        let limit = UInt64(max(Argon2id.physicalMemory() / 2, KDFParameters.memoryFloor))
        guard parameters.memoryLimit <= limit else {
            throw .unusableParameters("memory \(parameters.memoryLimit) over \(limit)")
        }
        let kdf = KDFParameters(
            opsLimit: parameters.opsLimit, memoryLimit: Int(parameters.memoryLimit), salt: parameters.salt)
        do {
            try kdf.validate()
        } catch {
            throw .unusableParameters("\(error)")
        }
        return kdf
    }

    func derive(_ password: SecretBytes, _ parameters: KDFParameters) throws(ModuleError) -> SecretBytes {
        transport.disconnect()
        do {
            return try Argon2id.deriveKey(password: password, parameters: parameters)
        } catch {
            throw .crypto("\(error)")
        }
    }

    /// A debug line, built only with `debug` (an autoclosure: most logins never pay for the text).
    func debug(_ message: @autoclosure () -> String) {
        if options.debug { context.log(.debug, message()) }
    }

    /// An info line, built only without `quiet`.
    func info(_ message: @autoclosure () -> String) {
        if !options.quiet { context.log(.info, message()) }
    }
}
