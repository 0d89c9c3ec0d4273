/// arcad's picture of logind's sessions: who owns each one and whether its screen
/// is locked (`LockedHint`). It decides nothing: every event returns the users
/// whose screens changed, and the watcher hands each one's screens (``screens(of:)``)
/// to that user's lock-state machine, which applies the `lock_on` policy
/// (``UserLockState/screensChanged(_:)``).
///
/// These are logind's sessions, keyed by their object paths; a PAM session
/// records the logind session it was opened in (``path(ofSession:)`` maps one to
/// the other).
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

    /// Sessions by object path.
    public private(set) var sessions: [String: Session] = [:]

    /// An empty view.
    public init() {}

    /// Every user with at least one session.
    public var users: Set<UInt32> { Set(sessions.values.map(\.uid)) }

    /// The screens of `uid`: each of its sessions' path and `LockedHint`.
    public func screens(of uid: UInt32) -> [String: Bool] {
        sessions.filter { $0.value.uid == uid }.mapValues(\.locked)
    }

    /// Replaces the whole picture (after `ListSessions`, at start or when logind
    /// reappears); returns the users before and after, in uid order.
    public mutating func replaceAll(_ list: [String: Session]) -> [UInt32] {
        let affected = users.union(list.values.map(\.uid))
        sessions = list
        return affected.sorted()
    }

    /// A session appeared or its state was read again; returns its owner (and a
    /// previous owner of the path).
    public mutating func update(_ path: String, _ session: Session) -> [UInt32] {
        var affected: Set<UInt32> = [session.uid]
        if let old = sessions[path] { affected.insert(old.uid) }
        sessions[path] = session
        return affected.sorted()
    }

    /// `LockedHint` of a known session changed; returns its owner, or nil for a
    /// session not in the view (the caller reads it from logind and calls `update`).
    public mutating func lockedHintChanged(_ path: String, locked: Bool) -> [UInt32]? {
        guard var session = sessions[path] else { return nil }
        session.locked = locked
        sessions[path] = session
        return [session.uid]
    }

    /// A session ended; returns its owner.
    public mutating func remove(_ path: String) -> [UInt32] {
        guard let old = sessions.removeValue(forKey: path) else { return [] }
        return [old.uid]
    }

    /// logind went away: nothing is known any more. Returns the users it knew.
    public mutating func clear() -> [UInt32] {
        defer { sessions = [:] }
        return users.sorted()
    }

    /// The object path logind gives session `id`: `/org/freedesktop/login1/session/`
    /// and the id escaped as sd-bus escapes a path label (`sd_bus_path_encode`): every
    /// byte but ASCII letters, and digits after the first byte, becomes `_` and two
    /// lower-case hex digits ("1" → `_31`).
    public static func path(ofSession id: String) -> String {
        var label = ""
        for (index, byte) in id.utf8.enumerated() {
            let letter = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            let digit = byte >= 0x30 && byte <= 0x39
            if letter || (digit && index > 0) {
                label.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                label += "_" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return "/org/freedesktop/login1/session/" + (label.isEmpty ? "_" : label)
    }
}
