/// arcad's picture of logind's sessions: who owns each session and whether its
/// screen is locked (`LockedHint`), and which users the `lock_on` policy counts
/// as locked.
///
/// Pure logic, no I/O: every event returns the uids that have just become
/// locked, for the caller to lock. Only the transition into "locked" is
/// reported: a screen that unlocks brings nothing back by itself (only the
/// locker's PAM authentication does, through pam_arca), and a user already
/// counted as locked is not locked again on every further signal.
///
/// These are logind's sessions, keyed by their object paths; they are
/// unrelated to arcad's PAM sessions (keyed by PAM tokens).
public struct LogindView: Sendable, Equatable {
    /// One logind session.
    public struct Session: Sendable, Equatable {
        /// Its owner.
        public var uid: UInt32
        /// `LockedHint`.
        public var locked: Bool

        /// A session of `uid`, locked or not.
        public init(uid: UInt32, locked: Bool) {
            self.uid = uid
            self.locked = locked
        }
    }

    /// How the screen locks of a user's sessions combine.
    public let policy: LockPolicy
    /// Sessions by object path.
    public private(set) var sessions: [String: Session] = [:]
    /// Users the policy counts as locked right now.
    public private(set) var lockedUsers: Set<UInt32> = []

    /// An empty view under `policy`.
    public init(policy: LockPolicy) { self.policy = policy }

    /// Every user with at least one session.
    public var users: Set<UInt32> { Set(sessions.values.map(\.uid)) }

    /// Replaces the whole picture (after `ListSessions`, at start or when logind
    /// reappears); returns users locked by it.
    public mutating func replaceAll(_ list: [String: Session]) -> [UInt32] {
        let affected = users.union(list.values.map(\.uid))
        sessions = list
        return reevaluate(affected)
    }

    /// A session appeared or its state was read again.
    public mutating func update(_ path: String, _ session: Session) -> [UInt32] {
        var affected: Set<UInt32> = [session.uid]
        if let old = sessions[path] { affected.insert(old.uid) }
        sessions[path] = session
        return reevaluate(affected)
    }

    /// `LockedHint` of a known session changed; nil for a session not in the view
    /// (the caller reads it from logind and calls `update`).
    public mutating func lockedHintChanged(_ path: String, locked: Bool) -> [UInt32]? {
        guard var session = sessions[path] else { return nil }
        session.locked = locked
        sessions[path] = session
        return reevaluate([session.uid])
    }

    /// A session ended. Under `all`, the end of the user's one unlocked session
    /// leaves only locked ones: that locks.
    public mutating func remove(_ path: String) -> [UInt32] {
        guard let old = sessions.removeValue(forKey: path) else { return [] }
        return reevaluate([old.uid])
    }

    /// logind went away: nothing is known any more, and nothing is locked by it.
    public mutating func clear() {
        sessions = [:]
        lockedUsers = []
    }

    /// Whether the policy counts `uid` as locked with the sessions in the view.
    public func isLocked(_ uid: UInt32) -> Bool {
        var total = 0
        var locked = 0
        for session in sessions.values where session.uid == uid {
            total += 1
            if session.locked { locked += 1 }
        }
        switch policy {
        case .any: return locked > 0
        case .all: return total > 0 && locked == total
        }
    }

    private mutating func reevaluate(_ uids: Set<UInt32>) -> [UInt32] {
        var newlyLocked: [UInt32] = []
        for uid in uids.sorted() {
            if isLocked(uid) {
                if lockedUsers.insert(uid).inserted { newlyLocked.append(uid) }
            } else {
                lockedUsers.remove(uid)
            }
        }
        return newlyLocked
    }
}
