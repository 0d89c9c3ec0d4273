import ArcaCrypto
import ArcaVault
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A login key that did not open the vault, kept until it is known to be the
/// user's real new password (ARCHITECTURE §1: an administrator reset never
/// silently destroys the vault).
struct PendingKey {
    let key: SecretBytes
    let parameters: KDFParameters
    /// Monotonic seconds after which an unconfirmed candidate is forgotten.
    let expires: Double
}

/// A key that failed a login's unlock (`loginUnlock`), held for the session of
/// that same PAM transaction: only the holder of `token` (pam_arca, in that
/// handle) can confirm it, so a failed login never lends its key to another
/// transaction's session.
struct Candidate {
    let token: SecretBytes
    let key: PendingKey
}

/// A candidate confirmed by one session: the same key confirmed again by
/// another session makes it the pending new password.
struct Suspect {
    let key: PendingKey
    let session: SessionID
}

/// Everything arcad holds for one user. Guarded by its own lock: requests of one
/// user are serialised, different users proceed in parallel.
final class UserState {
    let uid: UInt32
    var vault: Vault?
    /// The lock-state machine, with the user's sessions.
    var lock: UserLockState
    /// Failed login unlocks waiting for their own transaction's session, oldest
    /// first, at most `Daemon.maximumCandidates`.
    var candidates: [Candidate] = []
    /// A candidate whose session opened once. The same key confirmed by a
    /// second, separate session is taken as the new login password: a typo, or
    /// a stack that let a wrong password through, rarely repeats exactly.
    var suspect: Suspect?
    /// The confirmed new login password the vault is not yet wrapped to.
    var pending: PendingKey?
    /// Consecutive wrong keys or recovery keys, from any request that checks
    /// one (`Daemon.checkingKey`), for the growing delay.
    var failures = 0
    /// Per loaded class, items served by the socket only (too large, quota).
    var notInKernel: [KernelClass: Int] = [:]
    var itemsNotInKernel: Int { notInKernel.values.reduce(0, +) }
    /// Locked classes whose kernel keys arcad could not all destroy: every lock
    /// and status tries again, and reports them until it succeeds.
    var kernelNotRemoved: Set<KernelClass> = []
    /// The user's sync replica while afterFirstUnlock is unlocked (Daemon+SyncInbox).
    var sync: SyncSession?
    /// Monotonic time of the last request, for the idle timeout.
    var lastActivity = Clock.monotonicSeconds()

    init(uid: UInt32, policy: LockPolicy) {
        self.uid = uid
        lock = UserLockState(policy: policy)
    }

    /// Drops every candidate, suspect and pending new password: the vault was
    /// re-wrapped (password change, recovery) or the account is gone.
    func forgetNewPassword() {
        candidates.removeAll()
        suspect = nil
        pending = nil
    }
}

/// One user's state behind a mutex.
// @unchecked: `state` (a non-Sendable class) is touched only inside `withLock`.
final class UserContext: @unchecked Sendable {
    // `state` is only touched inside `withLock`, which holds `mutex`.
    private let mutex = Mutex(())
    private let state: UserState
    /// Held by a user's own request that checks a key, through its failure
    /// delay: guesses of one uid take turns, so parallel connections buy no
    /// extra tries. Separate from `mutex`, so the user's other requests proceed.
    private let guessTurn = Mutex(())
    /// The user's vault writes waiting to share a commit (`Daemon.groupCommit`).
    let commits = CommitGroup()

    init(uid: UInt32, policy: LockPolicy) {
        state = UserState(uid: uid, policy: policy)
    }

    func withLock<R>(_ body: (UserState) throws(HandlerError) -> R) throws(HandlerError) -> R {
        try mutex.withLock { _ throws(HandlerError) -> R in try body(state) }
    }

    /// Runs `body` in this user's turn to guess (see `guessTurn`).
    func inGuessTurn<R>(_ body: () throws(HandlerError) -> R) throws(HandlerError) -> R {
        try guessTurn.withLock { _ throws(HandlerError) -> R in try body() }
    }
}
