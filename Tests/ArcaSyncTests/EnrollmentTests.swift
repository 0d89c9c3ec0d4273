import ArcaCrypto
import Testing

@testable import ArcaSync

@Suite struct EnrollmentTests {
    @Test func bothSidesShowTheSameSixDigits() throws {
        let a = try DeviceID(Fixture.signer(1).publicKey)
        let b = try DeviceID(Fixture.signer(2).publicKey)
        let sas = Enrollment.shortAuthenticationString(a, b)
        #expect(sas.count == 6)
        #expect(sas.allSatisfy { $0.isNumber })
        #expect(sas == Enrollment.shortAuthenticationString(b, a))
        #expect(sas != Enrollment.shortAuthenticationString(a, try DeviceID(Fixture.signer(3).publicKey)))
    }

    @Test func anApprovedDeviceReadsTheCircle() throws {
        let approver = Fixture.signer(1)
        let newcomer = Fixture.signer(9)
        let approverID = try DeviceID(approver.publicKey)
        let newID = try DeviceID(newcomer.publicKey)
        let removed = try DeviceID(Fixture.signer(3).publicKey)
        var circle = Circle(devices: [approverID, removed], epoch: 4, key: Fixture.secret(0xEE))
        try circle.remove(removed, lastAccepted: 7)
        let approval = try Enrollment.approve(newID, circle: &circle, signer: approver)
        #expect(circle.activeDevices == [approverID, newID].sorted())
        let joined = try Enrollment.accept(approval, from: approverID, as: newcomer)
        #expect(joined.currentEpoch == 4)
        #expect(try joined.key(epoch: 4) == Fixture.secret(0xEE))
        #expect(joined.activeDevices == [approverID, newID].sorted())
        #expect(joined.members[removed]?.removedAfter == 7)
    }

    /// Attacks: an approval from someone else than the member compared, altered, or for another device.
    @Test func aForgedOrMisdirectedApprovalIsRefused() throws {
        let approver = Fixture.signer(1)
        let newcomer = Fixture.signer(9)
        let approverID = try DeviceID(approver.publicKey)
        var circle = Circle(devices: [approverID], epoch: 0, key: Fixture.secret(0xEE))
        let approval = try Enrollment.approve(try DeviceID(newcomer.publicKey), circle: &circle, signer: approver)
        let impostor = try DeviceID(Fixture.signer(2).publicKey)
        #expect(throws: SyncError.forged(approverID)) {
            _ = try Enrollment.accept(approval, from: impostor, as: newcomer)
        }
        for i in approval.indices {
            var b = approval
            b[i] ^= 1
            #expect(throws: SyncError.self) { _ = try Enrollment.accept(b, from: approverID, as: newcomer) }
        }
        #expect(throws: SyncError.malformed("the approval names another device")) {
            _ = try Enrollment.accept(approval, from: approverID, as: Fixture.signer(5))
        }
    }

    /// The epoch key is also wrapped to the recovery key, never only to the login password.
    @Test func theEpochKeyOpensWithTheRecoveryKeyOnly() throws {
        var circle = Circle(devices: [try DeviceID(Fixture.signer(1).publicKey)], epoch: 0, key: Fixture.secret(0xEE))
        #expect(try circle.rotate() == 1)
        let wrapped = try circle.epochKeyForRecovery(Fixture.secret(0x42))
        #expect(wrapped.count == 24 + 32 + 16)
        #expect(
            try Circle.epochKey(fromRecovery: wrapped, recoveryKey: Fixture.secret(0x42), epoch: 1)
                == circle.key(epoch: 1))
        #expect(throws: SyncError.backupUnreadable) {
            _ = try Circle.epochKey(fromRecovery: wrapped, recoveryKey: Fixture.secret(0x43), epoch: 1)
        }
        #expect(throws: SyncError.backupUnreadable) {  // bound to its epoch
            _ = try Circle.epochKey(fromRecovery: wrapped, recoveryKey: Fixture.secret(0x42), epoch: 0)
        }
    }
}
