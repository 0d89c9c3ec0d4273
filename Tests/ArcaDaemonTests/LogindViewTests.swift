import Testing

@testable import ArcaDaemon

/// The logind view: the picture of logind's sessions, without a bus. The policy
/// over it is the lock-state machine's (LockStateTests).
@Suite("logind view: who owns which logind session, and its LockedHint")
struct LogindViewTests {
    let a = "/org/freedesktop/login1/session/_31"
    let b = "/org/freedesktop/login1/session/_32"
    let c = "/org/freedesktop/login1/session/_33"

    @Test("each event names the users whose screens changed; screens(of:) gives their sessions")
    func events() {
        var view = LogindView()
        #expect(view.replaceAll([a: .init(uid: 1000, locked: false), b: .init(uid: 1000, locked: false)]) == [1000])
        #expect(view.lockedHintChanged(a, locked: true) == [1000])
        #expect(view.screens(of: 1000) == [a: true, b: false])
        #expect(view.lockedHintChanged(c, locked: true) == nil)  // unknown: the caller reads it
        #expect(view.update(c, .init(uid: 1001, locked: true)) == [1001])
        #expect(view.update(c, .init(uid: 1002, locked: false)) == [1001, 1002])  // a path reused by another user
        #expect(view.screens(of: 1001) == [:])
        #expect(view.users == [1000, 1002])
        #expect(view.remove(b) == [1000])
        #expect(view.remove(b) == [])
        #expect(view.clear() == [1000, 1002])
        #expect(view.sessions.isEmpty)
    }

    @Test("replaceAll names the users before and after, in uid order")
    func replace() {
        var view = LogindView()
        #expect(
            view.replaceAll([a: .init(uid: 1002, locked: true), b: .init(uid: 1000, locked: true)]) == [1000, 1002])
        #expect(view.replaceAll([c: .init(uid: 1000, locked: true)]) == [1000, 1002])
        #expect(view.screens(of: 1000) == [c: true])
    }

    @Test("a logind session id maps to the object path sd-bus gives it")
    func paths() {
        #expect(LogindView.path(ofSession: "1") == "/org/freedesktop/login1/session/_31")
        #expect(LogindView.path(ofSession: "c12") == "/org/freedesktop/login1/session/c12")
        #expect(LogindView.path(ofSession: "a-b") == "/org/freedesktop/login1/session/a_2db")
        #expect(LogindView.path(ofSession: "") == "/org/freedesktop/login1/session/_")
    }
}

@Suite("config: lock_on_suspend")
struct LogindConfigTests {
    @Test("yes by default; yes and no parse; anything else names the line")
    func lockOnSuspend() throws {
        #expect(DaemonConfig().lockOnSuspend == true)
        #expect(try DaemonConfig.parse("lock_on_suspend = no").lockOnSuspend == false)
        #expect(try DaemonConfig.parse("lock_on_suspend = no\nlock_on_suspend=yes").lockOnSuspend == true)
        #expect(
            throws: ConfigError(
                location: "/etc/arca/arca.conf:2",
                message: "lock_on_suspend must be 'yes' or 'no', got 'true'")
        ) {
            try DaemonConfig.parse("lock_on = all\nlock_on_suspend = true")
        }
    }
}
