import Testing

@testable import ArcaDaemon

@Suite("Lock-state machine")
struct LockStateTests {
    let a = SessionID([1])
    let b = SessionID([2])
    let screenA = "/org/freedesktop/login1/session/_31"
    let screenB = "/org/freedesktop/login1/session/_32"

    func record(_ number: UInt64, logind: String? = nil) -> SessionRecord {
        SessionRecord(number: number, service: "login", logindSession: logind)
    }

    @Test("first unlock loads afterFirstUnlock then whenUnlocked; a second unlock does nothing")
    func firstUnlock() {
        var s = UserLockState()
        #expect(s.loadedClasses == [])
        #expect(s.unlock() == [.load(.afterFirstUnlock), .load(.whenUnlocked)])
        #expect(s.unlock() == [])
        #expect(s.loadedClasses == [.afterFirstUnlock, .whenUnlocked])
    }

    @Test("the last session closing removes whenUnlocked; afterFirstUnlock stays")
    func lastSessionCloses() {
        var s = UserLockState()
        _ = s.unlock()
        #expect(s.openSession(a, record(1)) == [])
        #expect(s.openSession(b, record(2)) == [])
        #expect(s.openSession(b, record(3)) == [])
        #expect(s.sessionCount == 2)
        #expect(s.sessions[b]?.number == 2)  // a repeated open keeps the first record
        #expect(s.closeSession(a) == [])
        #expect(s.closeSession(a) == [])
        #expect(s.closeSession(b) == [.remove(.whenUnlocked)])
        #expect(s.loadedClasses == [.afterFirstUnlock])
        #expect(s.unlock() == [.load(.whenUnlocked)])
    }

    @Test("lock and idle remove whenUnlocked once; lock-all removes everything")
    func lockAndLockAll() {
        var s = UserLockState()
        #expect(s.lock() == [])
        #expect(s.lockAll() == [])
        _ = s.unlock()
        #expect(s.lock() == [.remove(.whenUnlocked)])
        #expect(s.lock() == [])
        #expect(s.lockAll() == [.remove(.afterFirstUnlock)])
        #expect(s.loadedClasses == [])
        _ = s.unlock()
        #expect(s.lockAll() == [.remove(.whenUnlocked), .remove(.afterFirstUnlock)])
    }

    @Test("policy any: one locked screen removes whenUnlocked, once; unlocking the screen alone brings nothing back")
    func screenLockAny() {
        var s = UserLockState(policy: .any)
        _ = s.unlock()
        #expect(s.screensChanged([screenA: false, screenB: false]) == [])
        #expect(s.screensChanged([screenA: true, screenB: false]) == [.remove(.whenUnlocked)])
        #expect(s.loadedClasses == [.afterFirstUnlock])
        #expect(s.unlock() == [.load(.whenUnlocked)])
        // Still counted as locked: a further signal does not lock the fresh unlock again.
        #expect(s.screensChanged([screenA: true, screenB: true]) == [])
        #expect(s.screensChanged([screenA: false, screenB: false]) == [])
        #expect(s.loadedClasses == [.afterFirstUnlock, .whenUnlocked])
        // A new lock locks again.
        #expect(s.screensChanged([screenA: false, screenB: true]) == [.remove(.whenUnlocked)])
    }

    @Test("policy all: whenUnlocked leaves only when every screen of the user is locked")
    func screenLockAll() {
        var s = UserLockState(policy: .all)
        _ = s.unlock()
        #expect(s.screensChanged([screenA: true, screenB: false]) == [])
        #expect(s.screensChanged([screenA: true, screenB: true]) == [.remove(.whenUnlocked)])
        #expect(s.screensChanged([:]) == [])  // no screen: nothing to be locked by
    }

    @Test("policy all: the end of the only unlocked screen leaves all remaining locked, which locks")
    func unlockedScreenEndsUnderAll() {
        var s = UserLockState(policy: .all)
        _ = s.unlock()
        #expect(s.screensChanged([screenA: true, screenB: false]) == [])
        #expect(s.screensChanged([screenA: true]) == [.remove(.whenUnlocked)])
    }

    @Test("logind gone and back with the screen still locked: locked again")
    func logindReturns() {
        var s = UserLockState(policy: .any)
        _ = s.unlock()
        #expect(s.screensChanged([screenA: true]) == [.remove(.whenUnlocked)])
        #expect(s.screensChanged([:]) == [])
        _ = s.unlock()
        #expect(s.screensChanged([screenA: true]) == [.remove(.whenUnlocked)])
    }

    @Test("suspend, idle and a deleted account go through the machine")
    func otherEvents() {
        var s = UserLockState()
        _ = s.unlock()
        #expect(s.suspend() == [.remove(.whenUnlocked)])
        #expect(s.suspend() == [])
        _ = s.unlock()
        #expect(s.idle() == [.remove(.whenUnlocked)])
        _ = s.unlock()
        _ = s.openSession(a, record(1))
        #expect(s.accountDeleted() == [.remove(.whenUnlocked), .remove(.afterFirstUnlock)])
        #expect(s.sessionCount == 0)
    }

    @Test("a session is locked when whenUnlocked is out of the kernel or its logind screen is locked")
    func sessionLocked() {
        var s = UserLockState(policy: .all)
        _ = s.openSession(a, record(1, logind: "1"))
        _ = s.openSession(b, record(2))
        #expect(s.isLocked(a) == true && s.isLocked(b) == true)  // nothing unlocked yet
        _ = s.unlock()
        #expect(s.isLocked(a) == false && s.isLocked(b) == false)
        // Under `all`, one locked screen of two does not lock the user, but that session is locked.
        #expect(s.screensChanged([screenA: true, screenB: false]) == [])
        #expect(s.isLocked(a) == true && s.isLocked(b) == false)
        #expect(s.isLocked(SessionID([9])) == nil)
        _ = s.lock()
        #expect(s.isLocked(b) == true)
    }

    @Test("restore from parked keys after a restart")
    func restore() {
        var s = UserLockState()
        s.restore(loaded: [.afterFirstUnlock])
        #expect(s.loadedClasses == [.afterFirstUnlock])
        s.restore(loaded: [.afterFirstUnlock, .whenUnlocked])
        #expect(s.lock() == [.remove(.whenUnlocked)])
        s.restore(loaded: [])
        #expect(s.loadedClasses == [])
    }
}
