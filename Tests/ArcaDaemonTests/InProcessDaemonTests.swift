import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// Request logic of arcad, in process, with the kernel twin. The state directory is
/// real (SQLite vaults), key parking uses root's real keyring: run as root.
@Suite("in-process arcad: request handling (root)", .serialized)
struct InProcessDaemonTests {
    let alice: UInt32 = 60_001
    let bob: UInt32 = 60_002

    @Test("enroll creates an unlocked vault; items land in the ring of their class")
    func enrollAndAdd() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(t.send(.kdfParameters(uid: alice), as: alice) == .kdfParameters(nil))
        _ = try enrolled(t, alice)
        #expect(t.send(.kdfParameters(uid: alice), as: alice) == .kdfParameters(testParameters))
        #expect(t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice) == .items([]))
        #expect(
            t.send(addRequest(alice, "vpn", "alice", "v-pn", accessible: .afterFirstUnlock), as: alice)
                == .items([]))
        #expect(statusCode(t.send(addRequest(alice, "mail", "alice", "other"), as: alice)) == -25299)
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:mail:alice": "s3cret"])
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:vpn:alice": "v-pn"])
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "s3cret")
        #expect(secretText(t.send(getRequest(alice, "mail", "nobody"), as: alice)) == "error -25300")
        let status = t.send(.status(uid: nil), as: alice)
        #expect(
            status
                == .status(
                    VaultStatus(
                        uid: alice, hasVault: true, unlocked: .all, sessionCount: 0, passwordOutOfSync: false,
                        itemsNotInKernel: 0, hasRecoveryKey: false)))
        #expect(
            statusCode(t.send(.enroll(uid: alice, key: try derivedKey("x"), parameters: testParameters), as: 0))
                == -25299)
    }

    @Test("lock removes whenUnlocked (locked, never not-found); unlock brings it back; lock-all removes all")
    func lockTransitions() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        _ = t.send(addRequest(alice, "vpn", "alice", "v-pn", accessible: .afterFirstUnlock), as: alice)
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:vpn:alice": "v-pn"])
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "error -25308")
        #expect(statusCode(t.send(addRequest(alice, "new", "alice", "x"), as: alice)) == -25308)
        #expect(secretText(t.send(getRequest(alice, "vpn", "alice"), as: alice)) == "v-pn")
        #expect(t.send(.unlock(uid: alice, key: key), as: alice) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:mail:alice": "s3cret"])
        #expect(t.send(.lockAll, as: alice) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == nil)
        #expect(secretText(t.send(getRequest(alice, "vpn", "alice"), as: alice)) == "error -25308")
    }

    @Test("sessions: closing one keeps whenUnlocked, closing the last removes it")
    func sessions() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        let s1 = SessionOpening(uid: alice, token: [1, 2, 3], service: "login", tty: "tty1")
        let s2 = SessionOpening(uid: alice, token: [4, 5, 6], service: "sshd", remoteHost: "10.0.0.1")
        #expect(t.send(.openSession(s1), as: 0) == .ok)
        #expect(t.send(.openSession(s2), as: 0) == .ok)
        #expect(t.send(.openSession(s2), as: 0) == .ok)
        guard case .sessions(let list) = t.send(.listSessions, as: 0) else {
            Issue.record("no session list")
            return
        }
        #expect(list.map(\.service) == ["login", "sshd"])
        #expect(list.map(\.uid) == [alice, alice])
        #expect(list.map(\.locked) == [false, false])
        // listSessions reports the real state (it said `false` whatever happened).
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        guard case .sessions(let lockedList) = t.send(.listSessions, as: 0) else {
            Issue.record("no session list")
            return
        }
        #expect(lockedList.map(\.locked) == [true, true])
        #expect(t.send(.unlock(uid: alice, key: key), as: alice) == .ok)
        #expect(t.send(.closeSession(uid: alice, token: [1, 2, 3]), as: 0) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:mail:alice": "s3cret"])
        #expect(t.send(.closeSession(uid: alice, token: [4, 5, 6]), as: 0) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
    }

    @Test("authorization: a user acts only on their own vault; refusals look the same with or without a vault")
    func authorization() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let refusals: [Request] = [
            .status(uid: alice), .kdfParameters(uid: alice), .unlock(uid: alice, key: try derivedKey("pw")),
            .enroll(uid: alice, key: try derivedKey("pw"), parameters: testParameters),
            addRequest(alice, "a", "b", "c"), getRequest(alice, "mail", "alice"),
            .lock(uid: alice, classes: .whenUnlocked), .closeSession(uid: alice, token: [1]),
        ]
        for request in refusals {
            let withVault = t.send(request, as: bob)
            #expect(withVault == .error(status: .missingEntitlement, message: "not allowed for this caller"))
        }
        // The same for a uid that has no vault at all: nothing leaks.
        #expect(
            t.send(.status(uid: 60_099), as: bob)
                == .error(status: .missingEntitlement, message: "not allowed for this caller"))
        #expect(
            t.send(.listSessions, as: bob)
                == .error(status: .missingEntitlement, message: "not allowed for this caller"))
        #expect(
            statusCode(
                t.send(
                    .passwordReset(uid: bob, newKey: try derivedKey("n"), parameters: testParameters),
                    as: bob)) == -34018)
        #expect(
            statusCode(
                t.send(
                    .enroll(uid: bob, key: try derivedKey("pw"), parameters: testParameters),
                    as: alice)) == -34018)
        #expect(statusCode(t.send(getRequest(bob, "mail", "bob"), as: bob)) == -25308)
        // The system vault is served (an empty one: not found).
        #expect(
            statusCode(t.send(.copyMatching(vault: .system, query: Query(itemClass: .genericPassword)), as: 0))
                == -25300)
    }

    @Test("wrong key → errSecAuthFailed and the vault stays locked")
    func wrongKey() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = t.send(.lockAll, as: alice)
        #expect(
            t.send(.unlock(uid: alice, key: try derivedKey("wrong")), as: alice)
                == .error(status: .authFailed, message: "wrong password or key"))
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.send(.unlockWithPassword(uid: alice, password: Array("pw".utf8)), as: alice) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == [:])
    }

    @Test("change password: the new key opens, the old does not; items survive")
    func changePassword() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let old = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        let newSalt = Array("fedcba9876543210".utf8)
        let new = try derivedKey("new", salt: newSalt)
        var params = testParameters
        params.salt = newSalt
        #expect(
            t.send(
                .changePassword(uid: alice, oldKey: try derivedKey("bad"), newKey: new, parameters: params),
                as: alice) == .error(status: .authFailed, message: "wrong password or key"))
        #expect(t.send(.changePassword(uid: alice, oldKey: old, newKey: new, parameters: params), as: alice) == .ok)
        _ = t.send(.lockAll, as: alice)
        #expect(statusCode(t.send(.unlock(uid: alice, key: old), as: alice)) == -25293)
        #expect(t.send(.unlock(uid: alice, key: new), as: alice) == .ok)
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "s3cret")
    }

    @Test("administrator reset: out of sync until an unlock with the old password re-wraps to the new one")
    func outOfSync() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let old = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        let new = try derivedKey("new")
        #expect(t.send(.passwordReset(uid: alice, newKey: new, parameters: testParameters), as: 0) == .ok)
        guard case .status(let s) = t.send(.status(uid: alice), as: alice) else { return }
        #expect(s.passwordOutOfSync == true)
        _ = t.send(.lockAll, as: alice)
        #expect(statusCode(t.send(.unlock(uid: alice, key: new), as: 0)) == -25293)
        #expect(t.send(.unlock(uid: alice, key: old), as: alice) == .ok)
        guard case .status(let after) = t.send(.status(uid: alice), as: alice) else { return }
        #expect(after.passwordOutOfSync == false)
        _ = t.send(.lockAll, as: alice)
        #expect(t.send(.unlock(uid: alice, key: new), as: 0) == .ok)
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "s3cret")
    }

    @Test("recovery key: rotate, then recover to a new password")
    func recovery() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        guard case .recoveryKey(let text) = t.send(.rotateRecoveryKey(uid: alice, key: key), as: alice) else {
            Issue.record("no recovery key")
            return
        }
        #expect(text.count >= 52)
        guard case .status(let s) = t.send(.status(uid: alice), as: alice) else { return }
        #expect(s.hasRecoveryKey == true)
        _ = t.send(.lockAll, as: alice)
        let new = try derivedKey("after-recovery")
        #expect(
            statusCode(
                t.send(
                    .recover(
                        uid: alice, recoveryKey: Array("AAAA".utf8), newKey: new,
                        parameters: testParameters), as: alice)) == -50)
        #expect(
            t.send(.recover(uid: alice, recoveryKey: text, newKey: new, parameters: testParameters), as: alice)
                == .ok)
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "s3cret")
        _ = t.send(.lockAll, as: alice)
        #expect(t.send(.unlock(uid: alice, key: new), as: alice) == .ok)
    }

    @Test("a restarted daemon restores unlocked users from parked keys")
    func restart() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        _ = t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice)
        _ = t.send(addRequest(alice, "vpn", "alice", "v", accessible: .afterFirstUnlock), as: alice)
        let second = try t.restarted()
        second.daemon.restoreParkedKeys()
        #expect(secretText(second.send(getRequest(alice, "vpn", "alice"), as: alice)) == "v")
        #expect(secretText(second.send(getRequest(alice, "mail", "alice"), as: alice)) == "error -25308")
        guard case .status(let s) = second.send(.status(uid: alice), as: alice) else { return }
        #expect(s.unlocked == .afterFirstUnlock)
    }

    @Test("update moves items between rings; delete removes them; both apply to every match")
    func updateAndDelete() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "a1", "one"), as: alice)
        _ = t.send(addRequest(alice, "mail", "a2", "two"), as: alice)
        let all = Query(itemClass: .genericPassword, attributes: [.service: .string("mail")])
        #expect(
            t.send(
                .update(
                    UpdateRequest(
                        vault: .user(uid: alice), query: all,
                        attributes: [.accessible: .accessibility(.afterFirstUnlock)])),
                as: alice) == .ok)
        #expect(t.kernel.ring(alice, .whenUnlocked) == [:])
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:mail:a1": "one", "arca:genp:mail:a2": "two"])
        #expect(
            t.send(
                .update(
                    UpdateRequest(
                        vault: .user(uid: alice),
                        query: Query(
                            itemClass: .genericPassword, attributes: genp("mail", "a1")), attributes: [:],
                        secret: Array("uno".utf8))),
                as: alice) == .ok)
        #expect(t.kernel.ring(alice, .afterFirstUnlock)?["arca:genp:mail:a1"] == "uno")
        #expect(
            statusCode(
                t.send(
                    .update(
                        UpdateRequest(
                            vault: .user(uid: alice), query: all,
                            attributes: [.creationDate: .date(microsecondsSinceEpoch: 0)])),
                    as: alice)) == -50)
        #expect(t.send(.delete(vault: .user(uid: alice), query: all), as: alice) == .ok)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
        #expect(statusCode(t.send(.delete(vault: .user(uid: alice), query: all), as: alice)) == -25300)
    }

    @Test("an item too large for the kernel is served by the socket and counted in status")
    func socketOnlyItem() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let big = String(repeating: "x", count: 40_000)
        _ = t.send(addRequest(alice, "big", "alice", big), as: alice)
        #expect(secretText(t.send(getRequest(alice, "big", "alice"), as: alice)) == big)
        #expect(t.kernel.ring(alice, .whenUnlocked) == [:])
        guard case .status(let s) = t.send(.status(uid: alice), as: alice) else { return }
        #expect(s.itemsNotInKernel == 1)
    }
}

@Suite("in-process arcad: timers and delays (root)", .serialized)
struct DaemonTimerTests {
    let alice: UInt32 = 60_011

    @Test("idle timeout: a user idle for longer than idle_timeout loses whenUnlocked, keeps afterFirstUnlock")
    func idleTimeout() throws {
        var config = DaemonConfig()
        config.idleTimeout = 1
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        #expect(t.send(.enroll(uid: alice, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        t.daemon.expireIdleUsers()
        #expect(t.kernel.ring(alice, .whenUnlocked) == ["arca:genp:mail:alice": "s3cret"])
        usleep(1_200_000)
        t.daemon.expireIdleUsers()
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == [:])
    }
}

@Suite("in-process arcad and deleted accounts (root)", .serialized)
struct DeletedAccountTests {
    @Test("an account that is gone loses its rings, sessions and parked keys; its vault is kept")
    func deletedAccount() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let (alice, bob): (UInt32, UInt32) = (60_021, 60_022)
        let key = try derivedKey("pw")
        for uid in [alice, bob] {
            #expect(t.send(.enroll(uid: uid, key: key, parameters: testParameters), as: 0) == .ok)
            _ = t.send(addRequest(uid, "mail", "u\(uid)", "s\(uid)", accessible: .afterFirstUnlock), as: uid)
        }
        #expect(t.send(.openSession(SessionOpening(uid: alice, token: [1], service: "login")), as: 0) == .ok)
        // Unknown (NSS down) changes nothing; only a definite "no such account" does.
        t.daemon.purgeDeletedUsers { _ in nil }
        #expect(t.kernel.purged == [])
        t.daemon.purgeDeletedUsers { $0 == alice ? false : true }
        #expect(t.kernel.purged == [alice])
        #expect(t.kernel.ring(alice, .afterFirstUnlock) == nil)
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.kernel.ring(bob, .afterFirstUnlock) == ["arca:genp:mail:u60022": "s60022"])
        guard case .status(let s) = t.send(.status(uid: alice), as: 0) else { return }
        #expect(s.hasVault == true)
        #expect(s.unlocked == [])
        #expect(s.sessionCount == 0)
        // A restarted daemon finds nothing parked for the deleted account.
        let second = try t.restarted()
        second.daemon.restoreParkedKeys()
        #expect(secretText(second.send(getRequest(alice, "mail", "u60021"), as: 0)) == "error -25308")
        #expect(secretText(second.send(getRequest(bob, "mail", "u60022"), as: 0)) == "s60022")
        #expect(Daemon.accountExists(0) == true)
        #expect(Daemon.accountExists(4_000_000_000) == false)
    }
}

@Suite("in-process arcad: limits")
struct DaemonLimitTests {
    @Test("failed-unlock delay: 0.25 s doubling, at most 2 s (under the PAM module's 3 s timeout)")
    func delays() {
        #expect([1, 2, 3, 4, 5, 40].map { Daemon.failureDelay(consecutive: $0) } == [0.25, 0.5, 1, 2, 2, 2])
    }

    @Test("Argon2id parameters above this machine's ceiling or 32 passes are refused (arcad runs them)")
    func kdfCeiling() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = [UInt8](repeating: 1, count: 32)
        var huge = testParameters
        huge.memoryLimit = UInt64(Argon2id.memoryCeiling()) + (4 << 20)
        var slow = testParameters
        slow.opsLimit = 33
        for parameters in [huge, slow] {
            #expect(statusCode(t.send(.enroll(uid: 60_031, key: key, parameters: parameters), as: 0)) == -50)
        }
    }

    @Test("sessions belong to the login stack: a user cannot open or close one, even their own")
    func sessionsRootOnly() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(
            statusCode(t.send(.openSession(SessionOpening(uid: 60_032, token: [1], service: "x")), as: 60_032))
                == -34018)
        #expect(statusCode(t.send(.closeSession(uid: 60_032, token: [1]), as: 60_032)) == -34018)
    }
}
