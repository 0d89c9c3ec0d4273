import ArcaCrypto
import ArcaProtocol
import CPAM
import Testing

@testable import ArcaPAM

@Suite struct ChangeAuthTokenTests {
    let update = Int32(PAM_UPDATE_AUTHTOK)

    @Test func prelimCheckDoesNothing() {
        let context = FakeContext()
        context.secrets = [.authToken: "new", .oldAuthToken: "old"]
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.changeAuthToken, flags: Int32(PAM_PRELIM_CHECK)) == ignore)
        #expect(arcad.requests.isEmpty)
    }

    @Test func oldAndNewRewrapWithAFreshSaltAndTheSameCost() throws {
        let context = FakeContext()
        context.secrets = [.authToken: "new", .oldAuthToken: "old"]
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("old", cheapWire))
        #expect(module(context, arcad).run(.changeAuthToken, flags: update) == success)
        #expect(arcad.kinds == ["kdfParameters", "changePassword"])
        guard case .changePassword(let uid, let oldKey, let newKey, let parameters) = arcad.requests[1] else { return }
        #expect(uid == 1000)
        #expect(oldKey == (try key("old", cheapWire)))
        #expect(parameters.opsLimit == cheapWire.opsLimit && parameters.memoryLimit == cheapWire.memoryLimit)
        #expect(parameters.salt != cheapWire.salt && parameters.salt.count == 16)
        #expect(newKey == (try key("new", parameters)))
        #expect(context.logs == ["info re-wrapped the vault of alice to the new password"])
        // The next login with the new password unlocks.
        context.secrets = [.authToken: "new"]
        _ = module(context, arcad).run(.authenticate, flags: 0)
        #expect(module(context, arcad).run(.openSession, flags: 0) == success)
        #expect(arcad.requests[3] == .loginUnlock(uid: 1000, key: newKey))
    }

    @Test func noOldTokenIsAReset() throws {
        let context = FakeContext()
        context.secrets = [.authToken: "new"]
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("old", cheapWire))
        #expect(module(context, arcad).run(.changeAuthToken, flags: update) == success)
        #expect(arcad.kinds == ["kdfParameters", "passwordReset"])
        guard case .passwordReset(_, let newKey, let parameters) = arcad.requests[1] else { return }
        #expect(newKey == (try key("new", parameters)))
        #expect(parameters.salt != cheapWire.salt)
    }

    @Test func noVaultOrNoNewTokenDoesNothing() {
        let context = FakeContext()
        context.secrets = [.authToken: "new", .oldAuthToken: "old"]
        let arcad = FakeArcad()
        #expect(module(context, arcad).run(.changeAuthToken, flags: update) == ignore)
        #expect(arcad.kinds == ["kdfParameters"])
        context.secrets = [:]
        #expect(module(context, arcad).run(.changeAuthToken, flags: update) == ignore)
        #expect(arcad.kinds == ["kdfParameters"])
    }

    @Test func aRefusedChangeIsIgnored() throws {
        let context = FakeContext()
        context.secrets = [.authToken: "new", .oldAuthToken: "not-the-old"]
        let arcad = FakeArcad()
        arcad.vault = (cheapWire, try key("old", cheapWire))
        #expect(module(context, arcad).run(.changeAuthToken, flags: update) == ignore)
        #expect(context.logs == ["error arcad refused changePassword (-25293): wrong old key"])
    }
}
