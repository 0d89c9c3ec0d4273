import ArcaCrypto
import ArcaProtocol
import CPAM
import Testing

@testable import ArcaPAM

@Suite struct StashAndErrorTests {
    @Test func authStashRoundTrips() throws {
        let key = try SecretBytes.random(count: 32)
        for enrollment in [nil, cheap] as [KDFParameters?] {
            for unlocked in [false, true] {
                let stash = AuthStash(uid: 4_000_000_001, unlockedInAuth: unlocked, enrollment: enrollment, key: key)
                let bytes = try stash.serialized()
                #expect(bytes.count == 70)
                let parsed = try #require(AuthStash.parse(bytes))
                #expect(parsed.uid == 4_000_000_001)
                #expect(parsed.unlockedInAuth == unlocked)
                #expect(parsed.enrollment == enrollment)
                #expect(parsed.key == key)
            }
        }
    }

    @Test func foreignStashesAreRefused() throws {
        #expect(AuthStash.parse(try SecretBytes(count: 69)) == nil)
        #expect(AuthStash.parse(try SecretBytes(count: 70)) == nil, "version 0")
        #expect(SessionStash.parse(try SecretBytes(count: 19)) == nil)
    }

    @Test func sessionStashRoundTrips() throws {
        let token = try SecretBytes.random(count: 16)
        let parsed = try #require(SessionStash.parse(try SessionStash(uid: 77, token: token).serialized()))
        #expect(parsed.uid == 77 && parsed.token == token)
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
            #expect(error.outcome.code == Int32(PAM_IGNORE))
            #expect(error.outcome.priority == .error)
            #expect(error.outcome.message == message)
        }
    }
}
