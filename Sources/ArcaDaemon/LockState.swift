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

/// How a screen lock of one session affects the user: `any` locked session
/// removes whenUnlocked (the default), or only when `all` sessions are locked.
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

/// One user's sessions and lock state: the heart of the Keychain classes on Linux.
///
/// Pure logic, no I/O: each event returns the effects for the caller to carry out
/// on the kernel and on the class keys it holds. Transitions (ARCHITECTURE §7):
///
/// | state | unlock | last session closes / lock / idle / screen lock | lock-all |
/// |---|---|---|---|
/// | locked | load afu, load wu → unlocked | — | — |
/// | afterFirstUnlock | load wu → unlocked | — | remove afu → locked |
/// | unlocked | — | remove wu → afterFirstUnlock | remove wu, remove afu → locked |
///
/// A screen that reports itself unlocked (logind `LockedHint=false`) never brings
/// whenUnlocked back on its own: arcad no longer holds that class key, and only a
/// fresh unlock with the password (the locker's PAM auth) provides it.
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
    /// Open sessions and whether each one's screen is locked.
    private var sessions: [SessionID: Bool] = [:]
    /// How screen locks combine across sessions.
    public var policy: LockPolicy

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

    /// Whether the session's screen is locked; nil for an unknown session.
    public func isScreenLocked(_ id: SessionID) -> Bool? { sessions[id] }

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

    /// A PAM session opened (after its unlock). Idempotent per token. The session
    /// counts as unlocked: someone just typed the password.
    public mutating func openSession(_ id: SessionID) -> [LockEffect] {
        sessions[id] = false
        return []
    }

    /// A PAM session closed: the last one removes whenUnlocked. Unknown tokens
    /// (closed twice, or opened before a restart that lost them) change nothing.
    public mutating func closeSession(_ id: SessionID) -> [LockEffect] {
        guard sessions.removeValue(forKey: id) != nil else { return [] }
        return sessions.isEmpty ? lockWhenUnlocked() : reevaluateScreens()
    }

    /// A session's screen lock changed (logind `LockedHint`).
    public mutating func screenLockChanged(_ id: SessionID, locked: Bool) -> [LockEffect] {
        guard sessions[id] != nil else { return [] }
        sessions[id] = locked
        return locked ? reevaluateScreens() : []
    }

    /// `arca lock`, an idle timeout, or suspend: whenUnlocked leaves the kernel.
    public mutating func lock() -> [LockEffect] {
        lockWhenUnlocked()
    }

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

    private mutating func lockWhenUnlocked() -> [LockEffect] {
        switch state {
        case .locked, .afterFirstUnlock:
            return []
        case .unlocked:
            state = .afterFirstUnlock
            return [.remove(.whenUnlocked)]
        }
    }

    private mutating func reevaluateScreens() -> [LockEffect] {
        let locked = sessions.values.filter { $0 }.count
        let shouldLock: Bool
        switch policy {
        case .any: shouldLock = locked > 0
        case .all: shouldLock = !sessions.isEmpty && locked == sessions.count
        }
        return shouldLock ? lockWhenUnlocked() : []
    }
}
