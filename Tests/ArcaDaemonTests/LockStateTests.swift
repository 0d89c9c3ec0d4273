import Testing
@testable import ArcaDaemon

@Suite("Lock-state machine")
struct LockStateTests {
    let a = SessionID([1])
    let b = SessionID([2])

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
        #expect(s.openSession(a) == [])
        #expect(s.openSession(b) == [])
        #expect(s.openSession(b) == [])
        #expect(s.sessionCount == 2)
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

    @Test("policy any: one locked screen removes whenUnlocked; unlocking the screen alone brings nothing back")
    func screenLockAny() {
        var s = UserLockState(policy: .any)
        _ = s.unlock()
        _ = s.openSession(a)
        _ = s.openSession(b)
        #expect(s.screenLockChanged(a, locked: true) == [.remove(.whenUnlocked)])
        #expect(s.isScreenLocked(a) == true)
        #expect(s.screenLockChanged(a, locked: false) == [])
        #expect(s.loadedClasses == [.afterFirstUnlock])
        #expect(s.unlock() == [.load(.whenUnlocked)])
    }

    @Test("policy all: whenUnlocked leaves only when every session is locked")
    func screenLockAll() {
        var s = UserLockState(policy: .all)
        _ = s.unlock()
        _ = s.openSession(a)
        _ = s.openSession(b)
        #expect(s.screenLockChanged(a, locked: true) == [])
        #expect(s.screenLockChanged(b, locked: true) == [.remove(.whenUnlocked)])
        #expect(s.screenLockChanged(SessionID([9]), locked: true) == [])
    }

    @Test("policy all: closing the only unlocked session leaves all remaining locked, which locks")
    func closeUnlockedSessionUnderAll() {
        var s = UserLockState(policy: .all)
        _ = s.unlock()
        _ = s.openSession(a)
        _ = s.openSession(b)
        _ = s.screenLockChanged(a, locked: true)
        #expect(s.closeSession(b) == [.remove(.whenUnlocked)])
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
