#if canImport(Glibc)
    import Glibc
#endif

/// Follows logind (`org.freedesktop.login1` on the system bus) and tells the daemon
/// when a user's screens change and when the machine suspends (`lock_on_suspend`);
/// the user's lock-state machine decides what locks (``UserLockState``).
///
/// With `lock_on_suspend`, it holds a sleep *delay* inhibitor (`Inhibit("sleep",
/// …, "delay")`): logind waits to suspend until arcad closes it, which arcad does
/// only once whenUnlocked has left the kernel on `PrepareForSleep(true)`, so a
/// suspend never races the removal. It takes a new one on `PrepareForSleep(false)`.
///
/// A logind session that ends (`SessionRemoved`) also ends the PAM sessions
/// opened from within it (`sessionEnded`).
///
/// It watches `ListSessions`, `SessionNew`, `SessionRemoved` and
/// `PrepareForSleep` of the Manager, and `PropertiesChanged` of each concrete
/// session object for `LockedHint` (logind's `Lock`/`Unlock` signals are requests
/// to the desktop, not confirmations). It never unlocks: whenUnlocked comes back
/// when the locker's PAM authentication sends an unlock through pam_arca.
///
/// Without a system bus it retries every `retrySeconds`; without logind on the
/// bus it waits for `NameOwnerChanged`. Each is logged once per outage.
// @unchecked: `view`, `owner` and `inhibitor` are touched only by the watcher thread; the rest is immutable.
public final class LogindWatcher: @unchecked Sendable {
    /// What to do when a user's logind sessions changed: uid, its screens (path →
    /// `LockedHint`), and the reason to log if that locks.
    public typealias ScreensAction = @Sendable (_ uid: UInt32, _ screens: [String: Bool], _ reason: String) -> Void
    /// What to do for each user with a logind session when the machine suspends.
    public typealias SuspendAction = @Sendable (_ uid: UInt32) -> Void
    /// What to do when a logind session ends: its id.
    public typealias SessionEndAction = @Sendable (_ id: String) -> Void

    private let lockOnSuspend: Bool
    private let retrySeconds: UInt32
    private let screensChanged: ScreensAction
    private let suspend: SuspendAction
    private let sessionEnded: SessionEndAction
    /// Touched only by the watcher thread.
    private var view: LogindView
    /// logind's unique bus name: signals from anyone else are ignored (on the
    /// system bus any client may broadcast a signal with logind's paths).
    private var owner: String?
    /// The sleep delay inhibitor's descriptor, or -1.
    private var inhibitor: Int32 = -1

    static let service = "org.freedesktop.login1"
    static let managerPath = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"
    static let session = "org.freedesktop.login1.Session"
    static let properties = "org.freedesktop.DBus.Properties"

    /// A watcher reporting screens to `screensChanged` and suspends to `suspend`;
    /// `sessionEnded` hears of every logind session that ends.
    public init(
        lockOnSuspend: Bool, retrySeconds: UInt32 = 5, screensChanged: @escaping ScreensAction,
        suspend: @escaping SuspendAction, sessionEnded: @escaping SessionEndAction = { _ in }
    ) {
        view = LogindView()
        self.lockOnSuspend = lockOnSuspend
        self.retrySeconds = max(1, retrySeconds)
        self.screensChanged = screensChanged
        self.suspend = suspend
        self.sessionEnded = sessionEnded
    }

    /// Starts a watcher for `daemon` on its own thread.
    public static func start(daemon: Daemon, config: DaemonConfig) {
        let watcher = LogindWatcher(
            lockOnSuspend: config.lockOnSuspend,
            screensChanged: { uid, screens, reason in daemon.logindScreensChanged(uid: uid, screens, reason: reason) },
            suspend: { uid in daemon.suspend(uid: uid) },
            sessionEnded: { id in daemon.logindSessionEnded(id) })
        do {
            try Threads.detach { watcher.run() }
        } catch {
            Log.error("cannot start the logind watcher thread: \(error)")
        }
    }

    /// Connects, watches, and reconnects, forever.
    func run() {
        var saidNoBus = false
        while true {
            let bus: SDBusConnection
            do {
                bus = try SDBusConnection.openSystem()
                try subscribe(bus)
            } catch {
                if !saidNoBus {
                    Log.notice(
                        "no system bus (\(error)): screen locks are not followed; retrying every "
                            + "\(retrySeconds) s")
                    saidNoBus = true
                }
                sleep(retrySeconds)
                continue
            }
            saidNoBus = false
            do {
                try watch(bus)
            } catch {
                Log.notice(
                    "system bus connection lost (\(error)): screen locks are not followed; retrying every "
                        + "\(retrySeconds) s")
                saidNoBus = true
            }
            report(view.clear(), reason: "no system bus")
            owner = nil
            releaseInhibitor(reason: "no system bus")
            sleep(retrySeconds)
        }
    }

    private func subscribe(_ bus: SDBusConnection) throws(SDBusError) {
        try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                + "member='NameOwnerChanged',arg0='\(Self.service)'")
        try bus.addMatch("type='signal',interface='\(Self.manager)',path='\(Self.managerPath)'")
        try bus.addMatch(
            "type='signal',interface='\(Self.properties)',member='PropertiesChanged',"
                + "path_namespace='/org/freedesktop/login1/session',arg0='\(Self.session)'")
    }

    private func watch(_ bus: SDBusConnection) throws(SDBusError) {
        resync(bus)
        while true {
            while try bus.process() {}
            let signals = bus.takeSignals()
            for signal in signals { handle(signal, bus: bus) }
            // A handler's method call may have queued more signals: process before waiting.
            if !signals.isEmpty { continue }
            try bus.wait(microseconds: UInt64.max)
        }
    }

    /// Reads every session afresh; locks whom the policy says.
    private func resync(_ bus: SDBusConnection) {
        do {
            let reply = try bus.call(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
                strings: [Self.service])
            owner = try reply.readString()
            var list: [String: LogindView.Session] = [:]
            let sessions = try bus.call(Self.service, Self.managerPath, Self.manager, "ListSessions")
            guard try sessions.enter("a", "(susso)") else {
                throw SDBusError(call: "ListSessions", errno: .badMessage, name: nil)
            }
            while try sessions.enter("r", "susso") {
                _ = try sessions.readString()
                let uid = try sessions.readUInt32()
                _ = try sessions.readString()
                _ = try sessions.readString()
                let path = try sessions.readString("o")
                try sessions.exit()
                // A session that ended between the list and this read is simply left out.
                if let locked = try? bus.boolProperty(Self.service, path, Self.session, "LockedHint") {
                    list[path] = LogindView.Session(uid: uid, locked: locked)
                }
            }
            try sessions.exit()
            Log.info("logind: following \(list.count) session(s)")
            report(view.replaceAll(list), reason: "screen locked (logind)")
            takeInhibitor(bus)
        } catch {
            owner = nil
            report(view.clear(), reason: "logind unreachable")
            releaseInhibitor(reason: "logind unreachable")
            if (error as? SDBusError)?.isNoOwner == true {
                Log.notice("logind is not on the system bus: screen locks are not followed until it appears")
            } else {
                Log.warning("logind: cannot list sessions (\(error)); waiting for it to restart")
            }
        }
    }

    private func handle(_ signal: SDBusMessage, bus: SDBusConnection) {
        do {
            switch (signal.interface, signal.member) {
            case ("org.freedesktop.DBus", "NameOwnerChanged"):
                guard signal.sender == "org.freedesktop.DBus" else { return }
                _ = try signal.readString()
                _ = try signal.readString()
                let newOwner = try signal.readString()
                if newOwner.isEmpty {
                    Log.notice("logind left the system bus: screen locks are not followed until it returns")
                    owner = nil
                    report(view.clear(), reason: "logind left")
                    releaseInhibitor(reason: "logind left")
                } else {
                    Log.notice("logind appeared on the system bus")
                    resync(bus)
                }
            case (Self.manager, let member?) where signal.sender == owner && owner != nil:
                try managerSignal(member, signal, bus: bus)
            case (Self.properties, "PropertiesChanged") where signal.sender == owner && owner != nil:
                guard let path = signal.path, let locked = try lockedHint(in: signal, path: path, bus: bus) else {
                    return
                }
                if let owners = view.lockedHintChanged(path, locked: locked) {
                    report(owners, reason: "screen locked (logind)")
                } else {
                    readSession(path, bus: bus)
                }
            default:
                return
            }
        } catch {
            Log.warning("logind: malformed \(signal.member ?? "signal") ignored (\(error))")
        }
    }

    private func managerSignal(_ member: String, _ signal: SDBusMessage, bus: SDBusConnection) throws(SDBusError) {
        switch member {
        case "SessionNew":
            _ = try signal.readString()
            readSession(try signal.readString("o"), bus: bus)
        case "SessionRemoved":
            let id = try signal.readString()
            report(view.remove(try signal.readString("o")), reason: "the only unlocked session ended (lock_on = all)")
            sessionEnded(id)
        case "PrepareForSleep":
            guard lockOnSuspend else { return }
            if try signal.readBool() {
                // Synchronous: whenUnlocked is out of the kernel before logind may suspend.
                for uid in view.users.sorted() { suspend(uid) }
                releaseInhibitor(reason: "whenUnlocked removed for suspend")
            } else {
                takeInhibitor(bus)
            }
        default:
            return
        }
    }

    /// Reads a session's owner and `LockedHint` and puts it into the view.
    private func readSession(_ path: String, bus: SDBusConnection) {
        do {
            let reply = try bus.call(Self.service, path, Self.properties, "Get", strings: [Self.session, "User"])
            guard try reply.enter("v", "(uo)"), try reply.enter("r", "uo") else {
                throw SDBusError(call: "User of \(path)", errno: .badMessage, name: nil)
            }
            let uid = try reply.readUInt32()
            let locked = try bus.boolProperty(Self.service, path, Self.session, "LockedHint")
            report(view.update(path, LogindView.Session(uid: uid, locked: locked)), reason: "screen locked (logind)")
        } catch {
            // Gone already (a session that ends right after it starts): nothing to follow.
            Log.debug("logind: cannot read \(path): \(error)")
        }
    }

    /// `LockedHint` from a PropertiesChanged signal: its new value, or read
    /// afresh when only invalidated; nil when the signal does not mention it.
    private func lockedHint(in signal: SDBusMessage, path: String, bus: SDBusConnection) throws(SDBusError) -> Bool? {
        _ = try signal.readString()
        var value: Bool?
        guard try signal.enter("a", "{sv}") else { return nil }
        while try signal.enter("e", "sv") {
            if try signal.readString() == "LockedHint", try signal.enter("v", "b") {
                value = try signal.readBool()
                try signal.exit()
            } else {
                try signal.skip("v")
            }
            try signal.exit()
        }
        try signal.exit()
        if let value { return value }
        guard try signal.enter("a", "s") else { return nil }
        var invalidated = false
        while let name = try? signal.readString() { if name == "LockedHint" { invalidated = true } }
        guard invalidated else { return nil }
        return try bus.boolProperty(Self.service, path, Self.session, "LockedHint")
    }

    /// Takes a sleep delay inhibitor unless one is held (or suspend does not lock).
    private func takeInhibitor(_ bus: SDBusConnection) {
        guard lockOnSuspend, inhibitor < 0 else { return }
        do {
            let reply = try bus.call(
                Self.service, Self.managerPath, Self.manager, "Inhibit",
                strings: ["sleep", "arcad", "Removing whenUnlocked secrets from the kernel", "delay"])
            inhibitor = try reply.readFileDescriptor()
            Log.debug("logind: sleep delay inhibitor taken")
        } catch {
            Log.warning("logind: cannot take a sleep delay inhibitor (\(error)); suspend may race the lock")
        }
    }

    /// Closes the inhibitor, letting a pending suspend go ahead.
    private func releaseInhibitor(reason: String) {
        guard inhibitor >= 0 else { return }
        close(inhibitor)
        inhibitor = -1
        Log.debug("logind: sleep delay inhibitor released (\(reason))")
    }

    /// Hands each user's screens, as the view now has them, to the daemon.
    private func report(_ uids: [UInt32], reason: String) {
        for uid in uids { screensChanged(uid, view.screens(of: uid), reason) }
    }
}
