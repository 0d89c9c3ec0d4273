import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// The out-of-sync rule (issue 14, point 1): a key that fails a login's unlock is
/// a candidate only for the session of the same PAM transaction, which presents
/// the token arcad returned with the failure; it becomes the pending new password
/// only when a second transaction's own session confirms the same key.
@Suite("in-process arcad: candidate keys (root)", .serialized)
struct CandidateTests {
    let alice: UInt32 = 60_041
    let bob: UInt32 = 60_042

    func outOfSync(_ t: TestDaemon, _ uid: UInt32) -> Bool? {
        guard case .status(let s) = t.send(.status(uid: uid), as: uid) else { return nil }
        return s.passwordOutOfSync
    }

    /// A login whose key does not open the vault: the candidate token arcad returns.
    func failedLogin(_ t: TestDaemon, _ uid: UInt32, _ key: [UInt8]) -> [UInt8]? {
        guard case .candidate(let token) = t.send(.loginUnlock(uid: uid, key: key), as: 0) else { return nil }
        return token
    }

    func open(_ t: TestDaemon, _ uid: UInt32, _ session: UInt8, service: String = "login") {
        #expect(t.send(.openSession(SessionOpening(uid: uid, token: [session], service: service)), as: 0) == .ok)
    }

    @Test("the attack: failed logins plus unrelated sessions never mark the vault out of sync nor re-wrap it")
    func failedLoginsAndForeignSessions() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let real = try enrolled(t, alice)
        let attacker = try derivedKey("attacker-pw")
        for round: UInt8 in 1...2 {
            let token = try #require(failedLogin(t, alice, attacker))
            #expect(token.count == 32)
            // cron-like: a session of the same uid, from another transaction, without the token.
            open(t, alice, round, service: "cron")
            #expect(t.send(.closeSession(uid: alice, token: [round]), as: 0) == .ok)
        }
        #expect(outOfSync(t, alice) == false)
        #expect(t.send(.loginUnlock(uid: alice, key: real), as: 0) == .ok)
        _ = t.send(.lockAll, as: alice)
        #expect(statusCode(t.send(.unlock(uid: alice, key: attacker), as: 0)) == -25293)
        #expect(t.send(.unlock(uid: alice, key: real), as: 0) == .ok)
    }

    @Test("the same key confirmed by two transactions, each in its own session: out of sync, then re-wrapped")
    func twoConfirmations() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let old = try enrolled(t, alice)
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret", accessible: .afterFirstUnlock), as: alice)
        _ = t.send(.lockAll, as: alice)
        let new = try derivedKey("changed-outside-pam")
        let first = try #require(failedLogin(t, alice, new))
        open(t, alice, 1)
        #expect(t.send(.confirmCandidate(uid: alice, candidate: first, session: [1]), as: 0) == .ok)
        #expect(outOfSync(t, alice) == false, "one session is not enough")
        let second = try #require(failedLogin(t, alice, new))
        open(t, alice, 2)
        #expect(t.send(.confirmCandidate(uid: alice, candidate: second, session: [2]), as: 0) == .ok)
        #expect(outOfSync(t, alice) == true)
        #expect(t.send(.unlock(uid: alice, key: old), as: alice) == .ok)
        #expect(outOfSync(t, alice) == false)
        _ = t.send(.lockAll, as: alice)
        #expect(statusCode(t.send(.unlock(uid: alice, key: old), as: 0)) == -25293)
        #expect(t.send(.unlock(uid: alice, key: new), as: 0) == .ok)
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "s3cret")
    }

    @Test("two different keys, or one key confirmed twice in one session, are not a new password")
    func noFalseConfirmation() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let typo = try #require(failedLogin(t, alice, try derivedKey("a typo")))
        open(t, alice, 1)
        #expect(t.send(.confirmCandidate(uid: alice, candidate: typo, session: [1]), as: 0) == .ok)
        let new = try derivedKey("new")
        let other = try #require(failedLogin(t, alice, new))
        open(t, alice, 2)
        #expect(t.send(.confirmCandidate(uid: alice, candidate: other, session: [2]), as: 0) == .ok)
        #expect(outOfSync(t, alice) == false, "a typo then the new password")
        let again = try #require(failedLogin(t, alice, new))
        #expect(t.send(.confirmCandidate(uid: alice, candidate: again, session: [2]), as: 0) == .ok)
        #expect(outOfSync(t, alice) == false, "the same session twice")
    }

    @Test("a candidate token is one use, for its own uid, with an open session; anything else is refused")
    func tokenRules() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = try enrolled(t, bob)
        let new = try derivedKey("new")
        let token = try #require(failedLogin(t, alice, new))
        let unknown = HandlerError.noCandidate.reply
        #expect(
            t.send(.confirmCandidate(uid: alice, candidate: token, session: [1]), as: 0) == unknown,
            "no such session yet")
        open(t, bob, 1)
        #expect(
            t.send(.confirmCandidate(uid: bob, candidate: token, session: [1]), as: 0) == unknown,
            "another uid")
        open(t, alice, 1)
        #expect(
            t.send(
                .confirmCandidate(uid: alice, candidate: [UInt8](repeating: 0, count: 32), session: [1]),
                as: 0) == unknown)
        // A refused confirmation does not use the token up; a confirmed one does.
        #expect(t.send(.confirmCandidate(uid: alice, candidate: token, session: [1]), as: 0) == .ok)
        #expect(t.send(.confirmCandidate(uid: alice, candidate: token, session: [1]), as: 0) == unknown)
        #expect(failedLogin(t, alice, new) != token, "a fresh token per failure")
    }

    @Test("only the login stack may leave or confirm a candidate; a plain unlock never leaves one")
    func rootOnly() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let new = try derivedKey("new")
        #expect(statusCode(t.send(.loginUnlock(uid: alice, key: new), as: alice)) == -34018)
        let token = try #require(failedLogin(t, alice, new))
        open(t, alice, 1)
        #expect(
            statusCode(t.send(.confirmCandidate(uid: alice, candidate: token, session: [1]), as: alice))
                == -34018)
        // An old pam_arca (plain unlock from root): a wrong key is only a failure.
        for session: UInt8 in 2...3 {
            #expect(
                t.send(.unlock(uid: alice, key: new), as: 0)
                    == .error(status: .authFailed, message: "wrong password or key"))
            open(t, alice, session)
        }
        #expect(outOfSync(t, alice) == false)
    }

    @Test("a user without a vault gets errSecInteractionNotAllowed, not a candidate")
    func noVault() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(statusCode(t.send(.loginUnlock(uid: alice, key: try derivedKey("x")), as: 0)) == -25308)
    }

    @Test("candidates of one uid are bounded: a flood of failed logins keeps the newest")
    func bounded() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let key = try derivedKey("flood")
        var tokens: [[UInt8]] = []
        for _ in 0..<(Daemon.maximumCandidates + 3) { tokens.append(try #require(failedLogin(t, alice, key))) }
        open(t, alice, 1)
        #expect(
            t.send(.confirmCandidate(uid: alice, candidate: tokens[0], session: [1]), as: 0)
                == HandlerError.noCandidate.reply, "the oldest was dropped")
        #expect(t.send(.confirmCandidate(uid: alice, candidate: tokens.last ?? [], session: [1]), as: 0) == .ok)
        let held = try t.daemon.context(alice).withLock { state throws(HandlerError) in state.candidates.count }
        #expect(held == Daemon.maximumCandidates - 1)
    }
}
