import ArcaCrypto
import ArcaProtocol
import ArcaVault

/// The login stack's unlock, and how a login password changed outside pam_arca
/// (an administrator's `chpasswd`, LDAP) becomes the vault's password without
/// letting a failed login re-key anyone's vault.
///
/// The rule: a key that fails `loginUnlock` is a *candidate*, bound to a random
/// token that only the PAM transaction that sent it holds (pam_arca keeps it with
/// `pam_set_data` on that handle). Only that transaction's open_session can present
/// it, with the token of the session it just opened; a login whose password PAM
/// refused never gets there. A candidate confirmed this way is a *suspect*; the
/// same key confirmed again by another transaction, in another session, is the
/// *pending* new password, which the next unlock with the old password (or the
/// recovery key) wraps the vault to. A candidate is never confirmed by a session
/// of another transaction (cron, another login), and a key seen once never re-keys.
extension Daemon {
    /// Candidates one uid may hold at once; a flood of failed logins drops the oldest.
    static let maximumCandidates = 8
    /// Seconds a candidate waits for its session (auth to open_session).
    static let candidateLifetime = 120.0

    /// `derivedWith`: the parameters pam_arca derived `key` with, from the copy arcad published
    /// (`loginUnlockDerived`). When they are not the vault's, the key proves nothing about the
    /// password: no unlock attempt, no candidate (it would be saved under parameters it was not
    /// derived with, and a later re-wrap would make the vault unopenable by its password), no
    /// guess counted (``checkingKey(of:peer:_:)``); the copy is rewritten and pam_arca derives again.
    func loginUnlock(
        uid: UInt32, key: SecretBytes, derivedWith: KeyDerivationParameters? = nil, peer: PeerCredentials
    ) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            let parameters = vault.kdfParameters
            let current = KeyDerivationParameters(
                opsLimit: parameters.opsLimit, memoryLimit: UInt64(parameters.memoryLimit), salt: parameters.salt)
            if let derivedWith, derivedWith != current {
                Log.warning("uid \(uid): the login derived its key from a stale published copy; republished")
                publishParameters(uid: uid, of: vault)
                return .staleParameters(current)
            }
            switch try unlockLocked(state, vault: vault, key: key) {
            case .unlocked:
                Log.info("uid \(uid): unlocked by the login stack")
                return .ok
            case .failed:
                // The key may be wrong only because pam_arca derived it from a published copy
                // that is stale (tampered with, or a publish that failed): rewrite it, so that
                // the next login derives with the vault's own parameters.
                publishParameters(uid: uid, of: vault)
                return .candidate(token: try keepCandidate(key, parameters: vault.kdfParameters, in: state))
            }
        }
    }

    func confirmCandidate(uid: UInt32, candidate: SecretBytes, session: [UInt8], peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            dropExpiredCandidates(state)
            let id = SessionID(session)
            guard state.lock.sessions[id] != nil,
                let index = state.candidates.firstIndex(where: { $0.token == candidate })
            else { throw HandlerError.noCandidate }
            let key = state.candidates.remove(at: index).key
            if let suspect = state.suspect, suspect.session != id, suspect.key.key == key.key {
                state.suspect = nil
                state.pending = key
                Log.notice(
                    "uid \(uid): login password out of sync with the vault; "
                        + "the next unlock with the old password (or the recovery key) re-wraps it")
            } else {
                state.suspect = Suspect(key: key, session: id)
                Log.notice("uid \(uid): a session opened with a password that does not open the vault")
            }
            return .ok
        }
    }

    /// Keeps `key` as a candidate and returns its token, as bytes for the reply.
    private func keepCandidate(_ key: SecretBytes, parameters: KDFParameters, in state: UserState)
        throws(HandlerError) -> [UInt8]
    {
        let token: SecretBytes
        let copy: SecretBytes
        do {
            token = try SecretBytes.random(count: ProtocolLimits.candidateTokenLength)
            copy = try key.copy()
        } catch {
            throw HandlerError(.notAvailable, "out of locked memory")
        }
        dropExpiredCandidates(state)
        if state.candidates.count >= Self.maximumCandidates { state.candidates.removeFirst() }
        state.candidates.append(
            Candidate(
                token: token,
                key: PendingKey(
                    key: copy, parameters: parameters, expires: Clock.monotonicSeconds() + Self.candidateLifetime)))
        return token.withUnsafeBytes { Array($0) }
    }

    private func dropExpiredCandidates(_ state: UserState) {
        let now = Clock.monotonicSeconds()
        state.candidates.removeAll { $0.key.expires <= now }
    }
}
