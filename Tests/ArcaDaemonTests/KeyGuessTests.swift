import ArcaCrypto
import ArcaProtocol
import Testing

@testable import ArcaDaemon

/// Which requests are guesses at a user's password, and that they share one
/// count (issue 14, point 4). The delays themselves: KeyGuessTimingTests.
@Suite("in-process arcad: key guesses (root)", .serialized)
struct KeyGuessTests {
    let alice: UInt32 = 60_061

    func failures(_ t: TestDaemon) throws -> Int {
        try t.daemon.context(alice).withLock { state throws(HandlerError) in state.failures }
    }

    @Test("a wrong key in unlock, loginUnlock, changePassword, rotateRecoveryKey or recover counts; a right one resets")
    func oneCount() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let right = try enrolled(t, alice)
        let wrong = try derivedKey("guess")
        // As root: counted, never delayed (a login must not wait on Arca), so this test is quick.
        #expect(statusCode(t.send(.unlock(uid: alice, key: wrong), as: 0)) == -25293)
        guard case .candidate = t.send(.loginUnlock(uid: alice, key: wrong), as: 0) else {
            Issue.record("no candidate")
            return
        }
        #expect(
            statusCode(
                t.send(
                    .changePassword(uid: alice, oldKey: wrong, newKey: wrong, parameters: testParameters), as: 0))
                == -25293)
        #expect(statusCode(t.send(.rotateRecoveryKey(uid: alice, key: wrong), as: 0)) == -25293)
        #expect(statusCode(t.send(.unlockWithPassword(uid: alice, password: Array("guess".utf8)), as: 0)) == -25293)
        #expect(try failures(t) == 5)
        // Not guesses: a malformed recovery key, a refusal, a reset.
        #expect(
            statusCode(
                t.send(
                    .recover(uid: alice, recoveryKey: Array("AAAA".utf8), newKey: wrong, parameters: testParameters),
                    as: 0))
                == -50)
        #expect(statusCode(t.send(.unlock(uid: alice, key: wrong), as: 60_062)) == -34018)
        #expect(t.send(.passwordReset(uid: alice, newKey: wrong, parameters: testParameters), as: 0) == .ok)
        #expect(try failures(t) == 5)
        guard case .recoveryKey(let recovery) = t.send(.rotateRecoveryKey(uid: alice, key: right), as: 0) else {
            Issue.record("no recovery key")
            return
        }
        #expect(try failures(t) == 0)
        #expect(statusCode(t.send(.unlock(uid: alice, key: wrong), as: 0)) == -25293)
        #expect(
            t.send(.recover(uid: alice, recoveryKey: recovery, newKey: right, parameters: testParameters), as: 0)
                == .ok)
        #expect(try failures(t) == 0)
    }

    @Test("every request is classified: exactly the seven that check a key are guesses")
    func classification() {
        let key = [UInt8](repeating: 1, count: 32)
        let kdf = testParameters
        let guesses: [Request] = [
            .unlock(uid: 7, key: key), .unlockWithPassword(uid: 7, password: [1]), .loginUnlock(uid: 7, key: key),
            .changePassword(uid: 7, oldKey: key, newKey: key, parameters: kdf),
            .recover(uid: 7, recoveryKey: [1], newKey: key, parameters: kdf), .rotateRecoveryKey(uid: 7, key: key),
            // An export sealed to the recovery key checks it against the vault first.
            .exportItems(uid: 7, secret: [1], passphrase: false),
        ]
        #expect(guesses.map { Daemon.keyChecked(by: $0) } == [7, 7, 7, 7, 7, 7, 7])
        let others: [Request] = [
            .status(uid: 7), .enroll(uid: 7, key: key, parameters: kdf),
            .passwordReset(uid: 7, newKey: key, parameters: kdf),
            .confirmCandidate(uid: 7, candidate: key, session: [1]), .lockAll,
            .exportItems(uid: 7, secret: [1], passphrase: true),
        ]
        #expect(others.map { Daemon.keyChecked(by: $0) } == [nil, nil, nil, nil, nil, nil])
    }
}
