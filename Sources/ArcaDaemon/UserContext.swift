import ArcaCrypto
import ArcaVault
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A session as arcad records it (for `listSessions` and the lock policy).
struct SessionRecord: Sendable {
    let number: UInt64
    let service: String
    let tty: String?
    let remoteHost: String?
    let remoteUser: String?
    let openedAt: Int64
    /// The process that opened the session (pam_arca in login, sshd, su…): when
    /// it dies without closing the session, arcad closes it (`reapSessions`).
    let opener: ProcessHandle?
    /// The logind session the opener was in, if any: its end (`SessionRemoved`)
    /// ends this session too.
    let logindSession: String?
}

/// A login key that did not open the vault, kept until it is known to be the
/// user's real new password (ARCHITECTURE §1: an administrator reset never
/// silently destroys the vault).
struct PendingKey {
    let key: SecretBytes
    let parameters: KDFParameters
    /// Monotonic seconds after which an unconfirmed candidate is forgotten.
    let expires: Double
}

/// Everything arcad holds for one user. Guarded by its own lock: requests of one
/// user are serialised, different users proceed in parallel.
final class UserState {
    let uid: UInt32
    var vault: Vault?
    var lock: UserLockState
    var sessions: [SessionID: SessionRecord] = [:]
    /// A failed unlock from the login stack, waiting for its session to open.
    var candidate: PendingKey?
    /// A candidate whose session opened once. The same key opening a second,
    /// separate session confirms it as the new login password: a typo, or a
    /// stack that let a wrong password through, rarely repeats exactly.
    var suspect: PendingKey?
    /// The confirmed new login password the vault is not yet wrapped to.
    var pending: PendingKey?
    /// Consecutive failed unlocks, for the growing delay.
    var failures = 0
    /// Per loaded class, items served by the socket only (too large, quota).
    var notInKernel: [KernelClass: Int] = [:]
    var itemsNotInKernel: Int { notInKernel.values.reduce(0, +) }
    /// Monotonic time of the last request, for the idle timeout.
    var lastActivity = Clock.monotonicSeconds()

    init(uid: UInt32, policy: LockPolicy) {
        self.uid = uid
        lock = UserLockState(policy: policy)
    }
}

/// One user's state behind a mutex.
final class UserContext: @unchecked Sendable {
    // `state` is only touched inside `withLock`, which holds `mutex`.
    private let mutex = Mutex(())
    private let state: UserState

    init(uid: UInt32, policy: LockPolicy) {
        state = UserState(uid: uid, policy: policy)
    }

    func withLock<R>(_ body: (UserState) throws(HandlerError) -> R) throws(HandlerError) -> R {
        try mutex.withLock { _ throws(HandlerError) -> R in try body(state) }
    }
}
