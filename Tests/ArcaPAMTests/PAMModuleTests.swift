import ArcaClient
import ArcaCrypto
import ArcaProtocol
import CPAM
import Testing

@testable import ArcaPAM

@Suite struct PAMModuleTests {
    @Test func firstLoginEnrollsThenOpensAndCloses() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters"])
        #expect(arcad.calibrations == 0, "auth never calibrates: most auths of a user without a vault are sudo")
        #expect(context.data[AuthStash.name] != nil)
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "enroll", "openSession"])
        #expect(arcad.calibrations == 1)
        // No connection kept across calibrating or deriving: open_session sends nothing before
        // them, so the one disconnect (before deriving) covers both; enroll and the session share one.
        #expect(arcad.disconnects == [1])
        guard case .enroll(let uid, let enrolledKey, let parameters) = arcad.requests[1] else {
            Issue.record("not an enroll: \(arcad.requests[1])")
            return
        }
        #expect(uid == 1000)
        #expect(parameters == KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 10, salt: cheap.salt))
        #expect(enrolledKey == (try key("pw", parameters)))
        #expect(context.data[AuthStash.name] == nil, "the key is dropped once used")
        guard case .openSession(let opening) = arcad.requests[2] else { return }
        #expect(opening.uid == 1000 && opening.service == "login" && opening.tty == nil && opening.token.count == 16)
        #expect(module(context, arcad).run(.closeSession, flags: 0) == success)
        #expect(arcad.requests.last == .closeSession(uid: 1000, token: opening.token))
        #expect(context.data[SessionStash.name] == nil)
        #expect(context.logs == ["info enrolled alice: created a vault unlocked by the login password"])
    }

    @Test func nextLoginUnlocksWithTheDerivedKey() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        context.items[.tty] = "tty3"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"])
        #expect(arcad.requests[1] == .loginUnlock(uid: 1000, key: try key("pw", cheapWire)))
        #expect(arcad.disconnects == [1], "auth's connection closed before the KDF; none in open_session")
        #expect(arcad.pairs == [1], "the unlock and the session in one round trip")
        guard case .openSession(let opening) = arcad.requests[2] else { return }
        #expect(opening.tty == "tty3")
        #expect(context.logs == ["info unlocked the vault of alice"])
    }

    @Test func quietSilencesSuccessAndDebugNamesSteps() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        _ = module(context, arcad, ["quiet"]).run(.authenticate, flags: 0)
        _ = module(context, arcad, ["quiet"]).run(.openSession, flags: 0)
        #expect(context.logs == [])
        _ = module(context, arcad, ["debug", "quiet"]).run(.closeSession, flags: 0)
        #expect(context.logs == ["debug closed a session of alice"])
    }

    @Test func openSessionIsIdempotentPerHandle() throws {
        let context = FakeContext()
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["openSession"])
        #expect(module(context, arcad).run(.closeSession, flags: 0) == success)
        #expect(module(context, arcad).run(.closeSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["openSession", "closeSession"])
    }

    @Test func screenLockerUnlocksInAuth() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        context.effectiveUID = 1000
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "unlock"])
        #expect(arcad.disconnects == [1], "the unlock after the KDF goes on a new connection")
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "unlock", "openSession"], "no second unlock")
        #expect(arcad.pairs == [])
    }

    @Test func screenLockerNeverEnrolls() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        context.effectiveUID = 1000
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters"])
        #expect(context.data[AuthStash.name] == nil)
    }

    @Test func noTokenMeansNothingInAuth() {
        let context = FakeContext()
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.requests.isEmpty)
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["openSession"])
        #expect(context.logs.isEmpty)
    }

    @Test func wrongPasswordStillOpensTheSessionAndPresentsItsCandidate() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "wrong"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession", "confirmCandidate"])
        #expect(arcad.pairs == [1], "the refused unlock and the session in one round trip")
        guard case .openSession(let opening) = arcad.requests[2] else { return }
        #expect(
            arcad.requests[3]
                == .confirmCandidate(uid: 1000, candidate: arcad.candidateToken, session: opening.token))
        #expect(context.data[CandidateStash.name] == nil, "one use")
        #expect(context.logs == ["error arcad refused loginUnlock (-25293): wrong password or key"])
        #expect(module(context, arcad).run(.closeSession, flags: 0) == success)
    }

    @Test func aCandidateFromAuthIsPresentedOnlyByTheSameHandle() throws {
        let failed = FakeContext()
        failed.secrets[.authToken] = "attacker-pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        #expect(module(failed, arcad, ["unlock_in_auth"]).run(.authenticate, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock"])
        #expect(failed.data[AuthStash.name] == nil)
        let kept = try #require(failed.data[CandidateStash.name].flatMap(CandidateStash.parse))
        #expect(kept.uid == 1000 && kept.token.withUnsafeBytes { Array($0) } == arcad.candidateToken)
        // Another transaction of the same user (cron, a second login): nothing to present.
        let other = FakeContext()
        #expect(module(other, arcad, ["unlock_in_auth"]).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"])
        // The same handle, were its login let in: no second unlock, the candidate presented.
        #expect(module(failed, arcad, ["unlock_in_auth"]).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession", "openSession", "confirmCandidate"])
        guard case .openSession(let opening) = arcad.requests[3] else { return }
        #expect(
            arcad.requests[4]
                == .confirmCandidate(uid: 1000, candidate: arcad.candidateToken, session: opening.token))
    }

    @Test func enrollmentUsesThePasswordAuthKeptAndDropsIt() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        // libpam clears PAM_AUTHTOK when pam_authenticate returns.
        context.secrets[.authToken] = nil
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == ["kdfParameters", "enroll", "openSession"])
        guard case .enroll(_, let enrolledKey, let parameters) = arcad.requests[1] else { return }
        #expect(enrolledKey == (try key("pw", parameters)))
        #expect(context.data[AuthStash.name] == nil, "the password is dropped once used")
    }

    /// Neither the key (right password) nor the candidate (wrong password, unlock_in_auth)
    /// that auth left for alice is used when the session turns out to be bob's.
    @Test(arguments: [
        ("pw", [] as [String], ["kdfParameters", "openSession"]),
        ("wrong", ["unlock_in_auth"], ["kdfParameters", "loginUnlock", "openSession"]),
    ])
    func aStashOfAnotherUserIsNotUsed(password: String, arguments: [String], kinds: [String]) throws {
        let context = FakeContext()
        context.secrets[.authToken] = password
        context.users["bob"] = 1001
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        _ = module(context, arcad, arguments).run(.authenticate, flags: 0)
        context.items[.user] = "bob"
        #expect(module(context, arcad, arguments).run(.openSession, flags: 0) == success)
        #expect(arcad.kinds == kinds)
        guard case .openSession(let opening) = arcad.requests.last else { return }
        #expect(opening.uid == 1001)
    }

    @Test func aTimeoutIsWaitedForOncePerTransaction() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.failures[.kdfParameters] = .timedOut
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(module(context, arcad).run(.closeSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters"])
        #expect(context.logs == ["error arcad did not answer in time", "error arcad did not answer in time"])
    }

    @Test func aPairedSessionThatTimesOutStillActsOnTheUnlock() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        arcad.failures[.openSession] = .timedOut
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.pairs == [1])
        #expect(context.logs == ["info unlocked the vault of alice", "error arcad did not answer in time"])
        #expect(context.data[SessionStash.name] == nil, "no session was opened")
        #expect(module(context, arcad).run(.closeSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"], "not waited for again")
    }

    @Test func aRefusedPairedUnlockIsLoggedWhenTheSessionTimesOut() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "wrong"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        arcad.failures[.openSession] = .timedOut
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"], "no candidate without a session")
        #expect(
            context.logs == [
                "error arcad refused loginUnlock (-25293): wrong password or key", "error arcad did not answer in time",
            ])
        #expect(context.data[CandidateStash.name] == nil)
    }

    /// A failed second reply is thrown, not sent again: arcad may have opened the session.
    /// (.timedOut cannot tell: the handle then refuses every later request anyway.)
    @Test func aPairedSessionWhoseReplyIsLostIsNotSentAgain() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        arcad.failures[.openSession] = .connectionClosed
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.pairs == [1])
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"])
        #expect(context.logs == ["info unlocked the vault of alice", "error arcad closed the connection"])
        #expect(context.data[SessionStash.name] == nil, "no session was opened")
    }

    @Test func aPairedUnlockThatTimesOutStillSendsTheSession() throws {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("pw", cheapWire))
        arcad.failures[.loginUnlock] = .timedOut
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "loginUnlock", "openSession"], "written in one go, as on the socket")
        #expect(context.logs == ["error arcad did not answer in time"])
    }

    @Test func arcadNotRunningIsTriedAgainEachCall() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        let down = ClientError.notRunning(path: "/run/arca/arcad.sock", errno: .noSuchFileOrDirectory)
        arcad.failures = [.kdfParameters: down, .openSession: down]
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(module(context, arcad).run(.openSession, flags: 0) == ignore)
        #expect(arcad.kinds == ["kdfParameters", "openSession"])
        #expect(context.logs.count == 2)
        #expect(context.logs[0] == "error arcad is not running (/run/arca/arcad.sock: No such file or directory)")
    }

    @Test func unexpectedRepliesAndUnusableParametersAreIgnored() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        arcad.vault = (KeyDerivationParameters(opsLimit: 1, memoryLimit: 1 << 62, salt: cheap.salt), [])
        #expect(module(context, arcad).run(.authenticate, flags: 0) == ignore)
        #expect(context.logs.count == 1)
        #expect(context.logs[0].hasPrefix("error unusable KDF parameters from arcad: memory 4611686018427387904 over "))
        #expect(context.data[AuthStash.name] == nil)
    }

    @Test func aFailedStashIsOneLine() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        context.failStash = true
        #expect(module(context, FakeArcad()).run(.authenticate, flags: 0) == ignore)
        #expect(context.logs == ["error pam_set_data failed"])
    }

    @Test func onlyIfSkipsOtherServices() {
        let context = FakeContext()
        context.secrets[.authToken] = "pw"
        let arcad = FakeArcad()
        for kind in [PAMEntryKind.authenticate, .openSession, .closeSession, .changeAuthToken] {
            #expect(module(context, arcad, ["only_if=sshd"]).run(kind, flags: Int32(PAM_UPDATE_AUTHTOK)) == ignore)
        }
        #expect(arcad.requests.isEmpty)
    }

    @Test func unknownUserAndNoUser() {
        let context = FakeContext()
        context.items[.user] = "mallory"
        #expect(module(context, FakeArcad()).run(.openSession, flags: 0) == ignore)
        context.items[.user] = nil
        #expect(module(context, FakeArcad()).run(.openSession, flags: 0) == ignore)
        #expect(context.logs == ["error unknown user mallory", "error no PAM_USER"])
    }

    @Test func setcredAndAccountDoNothing() {
        let context = FakeContext()
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.setCredentials, flags: 0) == ignore)
        #expect(module(context, arcad).run(.accountManagement, flags: 0) == ignore)
        #expect(arcad.requests.isEmpty)
    }
}
