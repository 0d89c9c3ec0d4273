import ArcaCrypto
import ArcaProtocol
import CPAM
import Testing

@testable import ArcaPAM

@Suite struct StashAndErrorTests {
    @Test func authStashRoundTrips() throws {
        let key = try SecretBytes.random(count: 32)
        let unlock = try #require(AuthStash.parse(try AuthStash(uid: 4_000_000_001, plan: .unlock(key)).serialized()))
        #expect(unlock.uid == 4_000_000_001)
        guard case .unlock(let parsedKey) = unlock.plan else {
            Issue.record("not an unlock: \(unlock.plan)")
            return
        }
        #expect(parsedKey == key)
        let done = try AuthStash(uid: 7, plan: .unlockedInAuth).serialized()
        #expect(done.count == 6, "nothing secret kept once auth unlocked")
        guard case .unlockedInAuth = try #require(AuthStash.parse(done)).plan else {
            Issue.record("not unlocked in auth")
            return
        }
        var bytes = Array("pässword".utf8)
        let password = try SecretBytes(consuming: &bytes)
        let enroll = try #require(
            AuthStash.parse(try AuthStash(uid: 8, plan: .enroll(password: password)).serialized()))
        guard case .enroll(let parsedPassword) = enroll.plan else {
            Issue.record("not an enrollment: \(enroll.plan)")
            return
        }
        #expect(enroll.uid == 8 && parsedPassword == password)
    }

    @Test func foreignStashesAreRefused() throws {
        #expect(AuthStash.parse(try SecretBytes(count: 5)) == nil)
        #expect(AuthStash.parse(try SecretBytes(count: 38)) == nil, "version 0")
        #expect(AuthStash.parse(try SecretBytes(count: 70) { $0[0] = 1 }) == nil, "version 1")
        #expect(
            AuthStash.parse(
                try SecretBytes(count: 37) {
                    $0[0] = 2
                    $0[1] = 1
                }) == nil, "a short key")
        #expect(
            AuthStash.parse(
                try SecretBytes(count: 7) {
                    $0[0] = 2
                    $0[1] = 2
                }) == nil, "trailing bytes")
        #expect(
            AuthStash.parse(
                try SecretBytes(count: 6) {
                    $0[0] = 2
                    $0[1] = 3
                }) == nil, "an empty password")
        #expect(
            AuthStash.parse(
                try SecretBytes(count: 38) {
                    $0[0] = 2
                    $0[1] = 4
                }) == nil, "an unknown plan")
        #expect(SessionStash.parse(try SecretBytes(count: 19)) == nil)
        #expect(AuthStash.parse(nil) == nil)
        #expect(SessionStash.parse(nil) == nil)
        #expect(CandidateStash.parse(nil) == nil)
        #expect(CandidateStash.parse(try SecretBytes(count: 20)) == nil, "a session stash is not a candidate")
    }

    @Test func sessionAndCandidateStashesRoundTrip() throws {
        let token = try SecretBytes.random(count: 16)
        let parsed = try #require(SessionStash.parse(try SessionStash(uid: 77, token: token).serialized()))
        #expect(parsed.uid == 77 && parsed.token == token)
        let candidate = try SecretBytes.random(count: 32)
        let kept = try #require(CandidateStash.parse(try CandidateStash(uid: 78, token: candidate).serialized()))
        #expect(kept.uid == 78 && kept.token == candidate)
    }

    @Test func everyFailureIsIgnoreWithOneLine() {
        let cases: [(ModuleError, String)] = [
            (.noUser, "no PAM_USER"),
            (.unknownUser("bob"), "unknown user bob"),
            (.arcadUnavailable(.timedOut), "arcad did not answer in time"),
            (.arcadUnavailable(.connectionClosed), "arcad closed the connection"),
            (
                .arcadRefused(request: .unlock, status: .authFailed, message: "wrong key"),
                "arcad refused unlock (-25293): wrong key"
            ),
            (.unexpectedReply(request: .unlock, reply: .items), "arcad answered unlock with items"),
            (.unusableParameters("salt"), "unusable KDF parameters from arcad: salt"),
            (.crypto("out of memory"), "key derivation failed: out of memory"),
            (.stashFailed, "pam_set_data failed"),
        ]
        for (error, message) in cases {
            #expect(error.outcome.result == .ignore)
            #expect(error.outcome.priority == .error)
            #expect(error.outcome.message == message)
        }
    }
}
