import ArcaCrypto
import ArcaProtocol
import CPAM

/// open_session and close_session: the unlock or enrollment auth prepared, the
/// session arcad counts, and the candidate key this handle's failed unlock left.
extension PAMModule {
    func openSession() throws(ModuleError) -> PAMResult {
        let (user, uid) = try currentUser()
        // Idempotent per handle: a second open must not orphan the first token.
        if let open = SessionStash.parse(context.stashed(name: SessionStash.name)) {
            if open.uid == uid {
                debug("a session of \(user) is already open in this handle")
                return .success
            }
            // PAM_USER changed since this handle opened a session for another user: close that
            // one first. Its token lives only here, and close_session will present the new one,
            // so arcad would count the old session until its process ends.
            closeReplaced(open)
        }
        var firstFailure: ModuleError?
        let token: SecretBytes
        do {
            token = try SecretBytes.random(count: SessionStash.tokenLength)
        } catch {
            throw .crypto("\(error)")
        }
        var opening = Request.openSession(
            SessionOpening(
                uid: uid, token: token.requestBytes(), service: context.item(.service) ?? "",
                tty: context.item(.tty), remoteHost: context.item(.remoteHost),
                remoteUser: context.item(.remoteUser)))
        defer { opening.wipeSecrets() }  // unsent when an unlock or enrollment fails first
        // Whether `opening` went with the unlock, and what became of it.
        var session = SessionRequest.unsent
        let stash = AuthStash.parse(context.stashed(name: AuthStash.name))
        context.removeStash(name: AuthStash.name)
        // Set when auth derived the key from the copy arcad published (PublishedStash).
        let published = PublishedStash.parse(context.stashed(name: PublishedStash.name))
        context.removeStash(name: PublishedStash.name)
        if let stash, stash.uid == uid {
            do throws(ModuleError) {
                switch stash.plan {
                case .unlockedInAuth:
                    break
                case .unlock(let key) where context.effectiveUID == 0:
                    // The unlock and the session in one round trip: arcad decides them in
                    // this order, as if sent one after the other (a wrong key still opens
                    // the session, as below). The unlock's reply is acted on (logged, a
                    // candidate kept) before a failure of the session's is reported, below.
                    // A key from the published copy goes with the parameters it was derived
                    // with: a stale copy gets `staleParameters` (no guess, no candidate), and
                    // the key is derived again with the vault's, once.
                    // (if-let, not Optional.map: no generic metadata in a fresh login process)
                    var derived: PublishedStash?
                    if let published, published.uid == uid { derived = published }
                    var unlocking = Request.loginUnlock(uid: uid, key: key.requestBytes())
                    if let derived {
                        unlocking.wipeSecrets()
                        unlocking = .loginUnlockDerived(
                            uid: uid, key: key.requestBytes(), parameters: derived.parameters)
                    }
                    var replies = try send(&unlocking, then: &opening)
                    defer { replies.first.wipeSecrets() }
                    session = .paired(replies.second)
                    if let derived {
                        var again = try derivedAgainIfStale(replies.first, uid: uid, password: derived.password)
                        defer { again.wipeSecrets() }
                        try loginUnlocked(again, uid: uid)
                    } else {
                        try loginUnlocked(replies.first, uid: uid)
                    }
                    info("unlocked the vault of \(user)")
                case .unlock(let key):
                    try unlock(uid: uid, key: key)
                    info("unlocked the vault of \(user)")
                case .enroll(let password):
                    try enroll(user: user, uid: uid, password: password)
                }
            } catch .arcadUnavailable(let error) {
                throw .arcadUnavailable(error)
            } catch {
                // A wrong key (password out of sync) still opens the session,
                // so that arcad counts it; the failure is logged here.
                let outcome = error.outcome
                context.log(outcome.priority, outcome.message)
                firstFailure = error
            }
        } else if stash == nil {
            debug("no key from auth for \(user) (no password, or auth ran in another process)")
        }
        // Left by this handle's own failed unlock, in auth or just above; one use.
        let candidate = CandidateStash.parse(context.stashed(name: CandidateStash.name))
        context.removeStash(name: CandidateStash.name)
        switch session {
        case .paired(.replied(let reply)): try expectSessionOpened(reply)
        case .paired(.failed(let error)): throw error  // not sent again: arcad may have opened it
        case .unsent: try expectSessionOpened(try send(&opening))
        }
        guard let serialized = try? SessionStash(uid: uid, token: token).serialized(),
            context.stash(serialized, name: SessionStash.name)
        else { throw .stashFailed }
        debug("opened a session for \(user)")
        if let candidate, candidate.uid == uid {
            confirm(candidate, session: token, user: user)
        }
        return firstFailure.map { $0.outcome.result } ?? .success
    }

    /// Throws unless `reply` is arcad's yes to an `openSession`.
    private func expectSessionOpened(_ reply: Reply) throws(ModuleError) {
        switch reply {
        case .ok: return
        case let other: throw unexpected(other, to: .openSession)
        }
    }

    /// The stack let in the password that did not open the vault, and this is its
    /// own session: tell arcad, with the candidate's token and the session's.
    /// A failure is logged and changes nothing else.
    private func confirm(_ candidate: CandidateStash, session: SecretBytes, user: String) {
        do throws(ModuleError) {
            try expectOK(
                .confirmCandidate(
                    uid: candidate.uid, candidate: candidate.token.requestBytes(), session: session.requestBytes()))
            debug("told arcad that a session of \(user) opened with a password the vault does not know")
        } catch {
            let outcome = error.outcome
            context.log(outcome.priority, outcome.message)
        }
    }

    /// Creates the vault at the first login, from the password auth kept:
    /// calibrated here, not in auth (see `AuthStash.Plan.enroll`).
    private func enroll(user: String, uid: UInt32, password: SecretBytes) throws(ModuleError) {
        guard options.autoEnroll else { return }
        let parameters: KDFParameters
        do {
            parameters = try calibrate()
        } catch {
            throw .crypto("\(error)")
        }
        let key = try derive(password, parameters)
        let wire = KeyDerivationParameters(
            opsLimit: parameters.opsLimit, memoryLimit: UInt64(parameters.memoryLimit), salt: parameters.salt)
        var request = Request.enroll(uid: uid, key: key.requestBytes(), parameters: wire)
        var reply = try send(&request)
        defer { reply.wipeSecrets() }
        switch reply {
        case .ok, .recoveryKey:
            // The recovery key is never shown through PAM: a display manager
            // would lose it and a terminal would keep it in its scrollback.
            info("enrolled \(user): created a vault unlocked by the login password")
        case .error(let status, let message):
            throw .arcadRefused(request: .enroll, status: status, message: message)
        case let other:
            throw unexpected(other, to: .enroll)
        }
    }

    /// Closes the session of another uid this handle opened (see ``openSession()``) and drops
    /// its token. A failure is logged and does not stop the new session from opening.
    private func closeReplaced(_ open: SessionStash) {
        context.removeStash(name: SessionStash.name)
        do throws(ModuleError) {
            try expectOK(.closeSession(uid: open.uid, token: open.token.requestBytes()))
            info("closed the session of uid \(open.uid) this handle had opened before PAM_USER changed")
        } catch {
            let outcome = error.outcome
            context.log(outcome.priority, outcome.message)
        }
    }

    func closeSession() throws(ModuleError) -> PAMResult {
        let (user, uid) = try currentUser()
        guard let stash = SessionStash.parse(context.stashed(name: SessionStash.name)), stash.uid == uid
        else {
            debug("no session of \(user) opened by this handle; nothing to close")
            return .ignore
        }
        try expectOK(.closeSession(uid: uid, token: stash.token.requestBytes()))
        context.removeStash(name: SessionStash.name)
        debug("closed a session of \(user)")
        return .success
    }
}

/// The replies to two requests sent in one round trip (``PAMModule/send(_:then:)``): a
/// concrete struct and enum, not a tuple or `Result<Reply, ModuleError>?`, whose generic
/// metadata a fresh login process would build at run time, by name, with a scan of every
/// protocol conformance for `ModuleError: Error` (about 200,000 instructions of
/// open_session's 315,000; bench/pam/callgrind.sh).
struct RepliedPair {
    /// The reply to the first request.
    var first: Reply
    /// What became of the second.
    var second: SecondReply
}

/// The reply to the second of two requests sent together, or why there is none.
enum SecondReply {
    /// arcad's reply.
    case replied(Reply)
    /// No reply: the exchange failed after the first reply.
    case failed(ModuleError)
}

/// open_session's request for the session: sent on its own (when no unlock went first,
/// or the unlock went alone), or sent with the unlock. Concrete, not `SecondReply?`: see
/// ``RepliedPair``.
private enum SessionRequest {
    /// Not sent yet.
    case unsent
    /// Sent with the unlock (``PAMModule/send(_:then:)``), and what became of it.
    case paired(SecondReply)
}
