import ArcaSystem
import CArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

// Why a child task and not a uid switch in this process: the kernel resolves @u
// from the caller's real uid. glibc's setresuid changes every thread of a
// threaded process, and a raw per-thread setresuid, though cheap, would let the
// user signal (SIGSTOP, SIGKILL) the root daemon while it lasts, since kill
// compares the sender's uid with the target's real uid. A child can only hurt
// itself; it is bounded by a timeout and killed. It is a clone(CLONE_VM) child
// making only raw system calls (details in CArcaSystem/keyring_as_user.c): fork() would copy
// the page tables of a process holding many mlocked secrets, milliseconds each.

/// The few keyring calls that must run with another user's real uid (linking
/// into or clearing that user's `@u`). They run in a short-lived child process
/// written in C (`arca_keyring_as_user` in CArcaSystem/keyring_as_user.c); the reasons for
/// a child rather than a per-thread `setresuid` are given there.
enum UserKeyringSwitch {
    /// What the child found.
    struct Outcome: Equatable {
        /// The serial of the user's `@u` (created if it did not exist).
        var userKeyring: Int32
        /// The serial of the keyring found by description in `@u`, if any.
        var found: Int32?
        /// With `reset`: `@u`'s permissions before they were put back to the default.
        var previousPermissions: UInt32 = 0
        /// With `anchor`: whether `@u` is now linked into it.
        var anchored = false
        /// With `drop`: whether `@u` and `@us` were invalidated, and the first failure.
        var droppedUserKeyring = false
        var droppedSessionKeyring = false
        var dropError: KeyringErrno?
    }

    /// The permissions the kernel gives a new user keyring (5.3 and later), which
    /// a purge puts back. The corresponding C constant is `ARCA_USER_KEYRING_DEFAULT_PERM`.
    static let defaultUserKeyringPermissions = UInt32(ARCA_USER_KEYRING_DEFAULT_PERM)

    /// How long to wait for the child before killing it: it does three system
    /// calls (~0.2 ms), so only a stopped or starved child takes this long. The
    /// child runs with the user's real uid, so the user may SIGSTOP it; arcad then
    /// holds only that user's keyring lock (never a process-wide one), so the
    /// stall is the user's own, and the bound keeps it well under pam_arca's 3 s.
    static let timeoutMilliseconds: Int32 = 1_000

    /// How long to wait for the kernel to collect an invalidated `@u` before a new one
    /// can be made for the uid.
    static let dyingKeyringWaitMilliseconds = 50

    /// As user `uid`: optionally find the keyring `description` in `@u`, then
    /// optionally link `ring` into `@u` (displacing the found one), then optionally
    /// link `@u` into `anchor` (best effort: `Outcome.anchored` says whether it was),
    /// then optionally (`reset`, as `@u`'s owner) put back `@u`'s default permissions,
    /// then optionally clear `@u`, then optionally (`drop`, with `reset`) invalidate
    /// `@u` and `@us` (best effort: `Outcome` says which). `pollWait` waits by
    /// polling `waitpid`, the path taken when `pidfd_open` fails. The corresponding C function is `arca_keyring_as_user`.
    static func run(
        uid: UInt32, find description: String?, link ring: Int32? = nil, anchor: KeySerial? = nil, reset: Bool = false,
        clear: Bool = false, drop: Bool = false, pollWait: Bool = false
    ) throws(KeyringError) -> Outcome {
        var ops: Int32 = 0
        if description != nil { ops |= ARCA_USER_OP_FIND }
        if ring != nil { ops |= ARCA_USER_OP_LINK }
        if reset { ops |= ARCA_USER_OP_RESET }
        if clear { ops |= ARCA_USER_OP_CLEAR }
        if drop { ops |= ARCA_USER_OP_DROP }
        if pollWait { ops |= ARCA_USER_OP_POLL_WAIT }
        if anchor != nil { ops |= ARCA_USER_OP_ANCHOR }
        var result = arca_user_op_result()
        let start = MonotonicClock.milliseconds()
        var status: Int32
        repeat {
            status = (description ?? "").withCString { cDescription in
                arca_keyring_as_user(
                    uid, ops, cDescription, ring ?? 0, anchor?.rawValue ?? 0, timeoutMilliseconds, &result)
            }
            // An @u invalidated a moment ago (by its owner, or by a purge of the uid) stays
            // in the kernel's register, and no new one can be made, until the garbage
            // collector has run: a few milliseconds. (A user who took the possessor's view
            // away from their @u gets the same answer, after the wait.) The wait is wall
            // time, children included: a child the user stopped (killed after
            // `timeoutMilliseconds`) is never tried again.
            guard status != 0, result.step == ARCA_USER_STEP_USER_KEYRING, result.error == ENOKEY,
                MonotonicClock.milliseconds() - start < dyingKeyringWaitMilliseconds
            else { break }
            usleep(2_000)
        } while true
        if status == 0 {
            return Outcome(
                userKeyring: result.user_keyring, found: result.found == 0 ? nil : result.found,
                previousPermissions: result.old_perm, anchored: result.anchored == 1,
                droppedUserKeyring: result.dropped & 1 != 0, droppedSessionKeyring: result.dropped & 2 != 0,
                dropError: result.drop_error == 0 ? nil : KeyringErrno(rawValue: result.drop_error))
        }
        let code = KeyringErrno(rawValue: result.error)
        let operation: String
        switch result.step {
        case ARCA_USER_STEP_FORK: operation = "fork"
        case ARCA_USER_STEP_SETUID: operation = "setresuid"
        case ARCA_USER_STEP_USER_KEYRING: operation = "keyctl_get_keyring_ID(@u)"
        case ARCA_USER_STEP_FIND: operation = "keyctl_search(@u)"
        case ARCA_USER_STEP_LINK: operation = "keyctl_link(@u)"
        case ARCA_USER_STEP_CLEAR: operation = "keyctl_clear(@u)"
        case ARCA_USER_STEP_SETPERM: operation = "keyctl_setperm(@u)"
        case ARCA_USER_STEP_WAIT: operation = "waitpid"
        default:
            throw KeyringError.helperFailed(uid: uid, signal: result.error)
        }
        throw KeyringError.system(code, operation: operation)
    }
}
