import Testing

@testable import ArcaDaemon

/// The logind view's policy, without a bus.
@Suite("logind view: lock_on = any | all over logind sessions")
struct LogindViewTests {
    let a = "/org/freedesktop/login1/session/_31"
    let b = "/org/freedesktop/login1/session/_32"
    let c = "/org/freedesktop/login1/session/_33"

    @Test("any: the first locked session locks the user, once; unlocking the screen brings nothing back")
    func anyPolicy() {
        var view = LogindView(policy: .any)
        #expect(view.replaceAll([a: .init(uid: 1000, locked: false), b: .init(uid: 1000, locked: false)]) == [])
        #expect(view.lockedHintChanged(a, locked: true) == [1000])
        #expect(view.lockedHintChanged(b, locked: true) == [])  // already counted as locked
        #expect(view.lockedHintChanged(a, locked: true) == [])  // a repeated signal
        #expect(view.lockedUsers == [1000])
        #expect(view.lockedHintChanged(a, locked: false) == [])
        #expect(view.lockedUsers == [1000])  // b is still locked
        #expect(view.lockedHintChanged(b, locked: false) == [])
        #expect(view.lockedUsers == [])
        #expect(view.lockedHintChanged(b, locked: true) == [1000])  // a new lock locks again
    }

    @Test("all: only when every session of the user is locked; other users are separate")
    func allPolicy() {
        var view = LogindView(policy: .all)
        _ = view.replaceAll([a: .init(uid: 1000, locked: false), b: .init(uid: 1000, locked: false),
                             c: .init(uid: 1001, locked: false)])
        #expect(view.lockedHintChanged(a, locked: true) == [])
        #expect(view.lockedHintChanged(c, locked: true) == [1001])
        #expect(view.lockedHintChanged(b, locked: true) == [1000])
        #expect(view.lockedHintChanged(a, locked: false) == [])
        #expect(view.lockedUsers == [1001])
        // The only unlocked session ends: what remains is all locked.
        #expect(view.remove(a) == [1000])
        #expect(view.remove(b) == [])
        #expect(view.isLocked(1000) == false)  // no session, nothing to be locked by
    }

    @Test("a session that appears locked locks; an unknown path asks for a read; clear forgets")
    func appearing() {
        var view = LogindView(policy: .any)
        #expect(view.lockedHintChanged(a, locked: true) == nil)
        #expect(view.update(a, .init(uid: 1000, locked: true)) == [1000])
        #expect(view.update(b, .init(uid: 1001, locked: false)) == [])
        #expect(view.users == [1000, 1001])
        #expect(view.remove(c) == [])
        view.clear()
        #expect(view.sessions.isEmpty && view.lockedUsers.isEmpty)
        // logind comes back with the screen still locked: locked again (arcad's lock is idempotent).
        #expect(view.replaceAll([a: .init(uid: 1000, locked: true)]) == [1000])
    }

    @Test("replaceAll reports every user it locks, in uid order, and forgets users who left")
    func replace() {
        var view = LogindView(policy: .any)
        #expect(view.replaceAll([a: .init(uid: 1002, locked: true), b: .init(uid: 1000, locked: true)]) == [1000, 1002])
        #expect(view.replaceAll([c: .init(uid: 1000, locked: true)]) == [])
        #expect(view.lockedUsers == [1000])
    }
}

@Suite("config: lock_on_suspend")
struct LogindConfigTests {
    @Test("yes by default; yes and no parse; anything else names the line")
    func lockOnSuspend() throws {
        #expect(DaemonConfig().lockOnSuspend == true)
        #expect(try DaemonConfig.parse("lock_on_suspend = no").lockOnSuspend == false)
        #expect(try DaemonConfig.parse("lock_on_suspend = no\nlock_on_suspend=yes").lockOnSuspend == true)
        #expect(throws: ConfigError(location: "/etc/arca/arca.conf:2",
                                    message: "lock_on_suspend must be 'yes' or 'no', got 'true'")) {
            try DaemonConfig.parse("lock_on = all\nlock_on_suspend = true")
        }
    }
}
