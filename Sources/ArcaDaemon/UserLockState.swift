/// The two kernel rings a user's items live in. The ThisDeviceOnly variants of
/// each accessibility class share their class's ring.
public enum KernelClass: String, Sendable, CaseIterable, Hashable {
    /// `arca:afu`: from the first unlock after boot until reboot or `lock --all`.
    case afterFirstUnlock
    /// `arca:wu`: only while the user has an unlocked session.
    case whenUnlocked
}

/// What arcad must do after a lock-state transition, in order.
public enum LockEffect: Equatable, Sendable {
    /// Put the class's items into the kernel (its class key is held).
    case load(KernelClass)
    /// Invalidate every kernel key of the class and drop its class key from memory.
    case remove(KernelClass)
}

/// How the screen locks of a user's logind sessions combine: `any` locked screen
/// removes whenUnlocked (the default), or only when `all` of them are locked.
public enum LockPolicy: String, Sendable {
    case any, all
}

/// An opaque session token handed out at PAM session open.
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The token's bytes.
    public let bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    /// Hex, for logs (a session token is not a secret: it only closes a session).
    public var description: String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// A PAM session as arcad records it (for `listSessions`, the reaper and logind).
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
    /// ends this session too, and its `LockedHint` is this session's screen.
    let logindSession: String?

    init(
        number: UInt64, service: String, tty: String? = nil, remoteHost: String? = nil, remoteUser: String? = nil,
        openedAt: Int64 = 0, opener: ProcessHandle? = nil, logindSession: String? = nil
    ) {
        self.number = number
        self.service = service
        self.tty = tty
        self.remoteHost = remoteHost
        self.remoteUser = remoteUser
        self.openedAt = openedAt
        self.opener = opener
        self.logindSession = logindSession
    }
}

/// One user's sessions and lock state: the heart of the Keychain classes on Linux,
/// and the one place that decides them. Every event that may lock or unlock goes
/// through it: unlock, PAM session open and close (or reaped), logind's screen
/// locks, suspend, the idle timeout, `arca lock` and `arca lock --all`, a deleted
/// account.
///
/// Pure logic, no I/O: each event returns the effects for the caller to carry out
/// on the kernel and on the class keys it holds. Transitions (ARCHITECTURE §7):
///
/// | state | unlock | last session closes / lock / idle / suspend / screen lock | lock-all |
/// |---|---|---|---|
/// | locked | load afu, load wu → unlocked | — | — |
/// | afterFirstUnlock | load wu → unlocked | — | remove afu → locked |
/// | unlocked | — | remove wu → afterFirstUnlock | remove wu, remove afu → locked |
///
/// Screen locks come from logind (`LockedHint` of the user's logind sessions) and
/// combine under `policy`. Only the transition into "locked" locks: a user already
/// counted as locked is not locked again on every further signal, and a screen
/// that reports itself unlocked never brings whenUnlocked back on its own: arcad
/// no longer holds that class key, and only a fresh unlock with the password (the
/// locker's PAM auth) provides it.
public struct UserLockState: Sendable {
    private enum State: Sendable {
        /// No class key held: after start with no parked keys, or after lock-all.
        case locked
        /// Only the afterFirstUnlock class key is held.
        case afterFirstUnlock
        /// Both class keys are held and both rings are in the kernel.
        case unlocked
    }

    private var state: State = .locked
    /// The user's open PAM sessions: the one session table.
    private(set) var sessions: [SessionID: SessionRecord] = [:]
    /// The user's logind sessions (object path) and their `LockedHint`.
    private var screens: [String: Bool] = [:]
    /// Whether `policy` counted the screens as locked after the last screen event.
    private var screensLocked = false
    /// How screen locks combine across logind sessions.
    public let policy: LockPolicy

    public init(policy: LockPolicy = .any) { self.policy = policy }

    /// The classes whose keys are held (and whose rings are in the kernel).
    public var loadedClasses: [KernelClass] {
        switch state {
        case .locked: []
        case .afterFirstUnlock: [.afterFirstUnlock]
        case .unlocked: [.afterFirstUnlock, .whenUnlocked]
        }
    }

    /// The number of open sessions.
    public var sessionCount: Int { sessions.count }

    /// Whether a session counts as locked: the user's whenUnlocked items are out of
    /// the kernel, or the screen of the logind session it was opened in is locked.
    /// Nil for an unknown session.
    func isLocked(_ id: SessionID) -> Bool? {
        guard let record = sessions[id] else { return nil }
        if state != .unlocked { return true }
        guard let logind = record.logindSession else { return false }
        return screens[LogindView.path(ofSession: logind)] ?? false
    }

    /// A successful unlock (PAM auth or session open, `arca unlock`): both classes.
    public mutating func unlock() -> [LockEffect] {
        switch state {
        case .locked:
            state = .unlocked
            return [.load(.afterFirstUnlock), .load(.whenUnlocked)]
        case .afterFirstUnlock:
            state = .unlocked
            return [.load(.whenUnlocked)]
        case .unlocked:
            return []
        }
    }

    /// Restores the state from keys that survived a restart of arcad.
    public mutating func restore(loaded classes: Set<KernelClass>) {
        switch (classes.contains(.afterFirstUnlock), classes.contains(.whenUnlocked)) {
        case (true, true): state = .unlocked
        case (true, false): state = .afterFirstUnlock
        case (false, _): state = .locked
        }
    }

    /// A PAM session opened (after its unlock). Idempotent per token: the first
    /// record stays. Opening never locks: someone just typed the password.
    mutating func openSession(_ id: SessionID, _ record: SessionRecord) -> [LockEffect] {
        if sessions[id] == nil { sessions[id] = record }
        return []
    }

    /// A PAM session closed, or reaped (its opener died, its logind session ended):
    /// the last one removes whenUnlocked. Unknown tokens (closed twice, or opened
    /// before a restart that lost them) change nothing.
    public mutating func closeSession(_ id: SessionID) -> [LockEffect] {
        guard sessions.removeValue(forKey: id) != nil else { return [] }
        return sessions.isEmpty ? lockWhenUnlocked() : []
    }

    /// logind's picture of the user's sessions changed (a `LockedHint`, a session
    /// new or removed, a resync; empty when logind is gone): locks on the transition
    /// into "locked" under `policy`.
    public mutating func screensChanged(_ screens: [String: Bool]) -> [LockEffect] {
        self.screens = screens
        let locked: Bool
        switch policy {
        case .any: locked = screens.values.contains(true)
        case .all: locked = !screens.isEmpty && !screens.values.contains(false)
        }
        defer { screensLocked = locked }
        return locked && !screensLocked ? lockWhenUnlocked() : []
    }

    /// The machine is about to suspend (`lock_on_suspend`): whenUnlocked leaves the kernel.
    public mutating func suspend() -> [LockEffect] { lockWhenUnlocked() }

    /// The user was idle longer than `idle_timeout`: whenUnlocked leaves the kernel.
    public mutating func idle() -> [LockEffect] { lockWhenUnlocked() }

    /// `arca lock`: whenUnlocked leaves the kernel.
    public mutating func lock() -> [LockEffect] { lockWhenUnlocked() }

    /// `arca lock --all`: everything leaves the kernel until the next unlock.
    public mutating func lockAll() -> [LockEffect] {
        switch state {
        case .locked:
            return []
        case .afterFirstUnlock:
            state = .locked
            return [.remove(.afterFirstUnlock)]
        case .unlocked:
            state = .locked
            return [.remove(.whenUnlocked), .remove(.afterFirstUnlock)]
        }
    }

    /// The account was deleted: everything leaves the kernel and its sessions are forgotten.
    public mutating func accountDeleted() -> [LockEffect] {
        sessions.removeAll()
        return lockAll()
    }

    private mutating func lockWhenUnlocked() -> [LockEffect] {
        switch state {
        case .locked, .afterFirstUnlock:
            return []
        case .unlocked:
            state = .afterFirstUnlock
            return [.remove(.whenUnlocked)]
        }
    }
}
