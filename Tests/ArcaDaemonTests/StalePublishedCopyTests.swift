import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import Foundation
import Testing

@testable import ArcaDaemon

/// A stale published copy from a live publisher (root tampering, a failed unlink after a
/// failed publish, a change that forgot to publish): pam_arca believes it and derives a key
/// with the wrong parameters. Sent with those parameters (`loginUnlockDerived`), the key is
/// refused as `staleParameters`: no guess counted, no candidate kept (a candidate confirmed in
/// two sessions would re-wrap the vault to a key its password cannot derive), the copy is
/// rewritten, and the login derives again and unlocks.
@Suite struct StalePublishedCopyTests {
    let uid: UInt32 = 4243

    @Test func aStaleCopyCountsNoGuessKeepsNoCandidateAndTheVaultStillOpensWithItsPassword() throws {
        let place = try KDFPublicationTests.Place()
        let real = try derivedKey("pw")
        #expect(place.send(.enroll(uid: uid, key: real, parameters: testParameters)) == .ok)
        _ = place.send(.lockAll)
        var stale = testParameters
        stale.salt[8] ^= 0xFF  // one salt byte flipped, as root could, keeping the live publisher
        let path = PublishedKDFParameters.path(socketPath: place.config.socketPath, uid: uid)
        try Data(
            PublishedKDFParameters(
                publisherPID: UInt32(bitPattern: getpid()), publisherStartTime: try #require(ProcessStartTime.current),
                uid: uid, parameters: stale
            ).encoded()
        ).write(to: URL(fileURLWithPath: path))
        #expect(try place.published(uid)?.parameters == stale)
        let fromStale = try derivedKey("pw", salt: stale.salt)

        for session: UInt8 in 1...2 {
            // What pam_arca's open_session does: the unlock with the parameters it used, the session,
            // then (stale) the key derived again with the vault's, or (candidate) its confirmation.
            let reply = place.send(.loginUnlockDerived(uid: uid, key: fromStale, parameters: stale))
            #expect(reply == .staleParameters(testParameters))
            #expect(place.send(.openSession(SessionOpening(uid: uid, token: [session], service: "login"))) == .ok)
            if case .candidate(let token) = reply {
                _ = place.send(.confirmCandidate(uid: uid, candidate: token, session: [session]))
            } else {
                #expect(place.send(.loginUnlock(uid: uid, key: real)) == .ok, "the login unlocks")
            }
            #expect(try place.daemon.context(uid).withLock { state throws(HandlerError) in state.failures } == 0)
            #expect(
                try place.daemon.context(uid).withLock { state throws(HandlerError) in state.candidates.count } == 0)
            #expect(try place.published(uid)?.parameters == testParameters, "the copy is rewritten")
            _ = place.send(.lockAll)
            // The next login would take the rewritten copy; tamper again for the second round.
            try Data(
                PublishedKDFParameters(
                    publisherPID: UInt32(bitPattern: getpid()),
                    publisherStartTime: try #require(ProcessStartTime.current), uid: uid, parameters: stale
                ).encoded()
            ).write(to: URL(fileURLWithPath: path))
        }
        // `arca unlock` with the real password, then again: the vault was not re-wrapped.
        var unlock = Request.unlock(uid: uid, key: real)
        #expect(place.daemon.handle(&unlock, from: PeerCredentials(pid: 1, uid: uid, gid: uid)) == .ok)
        _ = place.send(.lockAll)
        unlock = .unlock(uid: uid, key: real)
        #expect(place.daemon.handle(&unlock, from: PeerCredentials(pid: 1, uid: uid, gid: uid)) == .ok)
    }

    /// The parameters right: as `loginUnlock` (a wrong key is a candidate and a guess).
    @Test func theVaultsOwnParametersAreAPlainLoginUnlock() throws {
        let place = try KDFPublicationTests.Place()
        let real = try derivedKey("pw")
        #expect(place.send(.enroll(uid: uid, key: real, parameters: testParameters)) == .ok)
        _ = place.send(.lockAll)
        guard
            case .candidate = place.send(
                .loginUnlockDerived(uid: uid, key: try derivedKey("no"), parameters: testParameters))
        else {
            Issue.record("a wrong key with the right parameters is a candidate")
            return
        }
        #expect(try place.daemon.context(uid).withLock { state throws(HandlerError) in state.failures } == 1)
        #expect(place.send(.loginUnlockDerived(uid: uid, key: real, parameters: testParameters)) == .ok)
        #expect(try place.daemon.context(uid).withLock { state throws(HandlerError) in state.failures } == 0)
    }
}
