import ArcaProtocol
import Testing

@testable import ArcaDaemon

/// logind's screens, suspend and parking, through the in-process daemon and its
/// kernel twin: each event reaches the user's one lock-state machine.
@Suite("in-process arcad: logind screens, suspend and parking go through the lock-state machine (root)", .serialized)
struct DaemonLockEventTests {
    let alice: UInt32 = 60_031
    let screenA = LogindView.path(ofSession: "1")
    let screenB = LogindView.path(ofSession: "2")

    @Test("lock_on = all: whenUnlocked leaves when the last screen locks, and the log says why")
    func screensUnderAll() throws {
        var config = DaemonConfig()
        config.lockOn = .all
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s"), as: alice)
        t.daemon.logindScreensChanged(uid: alice, [screenA: true, screenB: false], reason: "screen locked (logind)")
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:mail:alice": "s"])
        t.daemon.logindScreensChanged(uid: alice, [screenA: true, screenB: true], reason: "screen locked (logind)")
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "error -25308")
    }

    @Test("suspend removes whenUnlocked of the user, once")
    func suspend() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s"), as: alice)
        t.daemon.suspend(uid: alice)
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        guard case .status(let status) = t.send(.status(uid: alice), as: alice) else { return }
        #expect(status.unlocked == .afterFirstUnlock)
    }

    @Test("held keys are parked through the kernel seam (no root keyring touched) and restored after a restart")
    func parking() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        #expect(t.kernel.parkedUIDs == [alice])
        let second = try t.restarted()
        second.daemon.restoreParkedKeys()
        guard case .status(let status) = second.send(.status(uid: alice), as: alice) else { return }
        #expect(status.unlocked == [.afterFirstUnlock, .whenUnlocked])
    }
}
