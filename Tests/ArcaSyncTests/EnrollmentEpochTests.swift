import ArcaCrypto
import Testing

@testable import ArcaSync

/// A device approved after a rotation gets every epoch key its approver holds (approval v2),
/// and version 1 approvals (the current key only) are still accepted.
@Suite struct EnrollmentEpochTests {
    @Test func aDeviceApprovedAfterARotationAppliesRecordsOfEveryEpoch() throws {
        var d = Fixture.circle(2)
        let (old, first) = try d[0].replica.create(Fixture.body("epoch0", "zero"))
        try d[1].replica.apply(first.bytes)
        try d[0].replica.circle.remove(d[1].id, lastAccepted: 0)
        #expect(try d[0].replica.circle.rotate() == 1)
        let (new, second) = try d[0].replica.create(Fixture.body("epoch1", "one"))
        #expect(first.header.epoch == 0)
        #expect(second.header.epoch == 1)

        let newcomer = Fixture.signer(9)
        let newID = try DeviceID(newcomer.publicKey)
        let approval = try Enrollment.approve(newID, circle: &d[0].replica.circle, signer: d[0].signer)
        #expect(Array(approval.prefix(4)) == Array("ARA2".utf8))
        let joined = try Enrollment.accept(approval, from: d[0].id, as: newcomer)
        #expect(joined.currentEpoch == 1)
        #expect(joined.epochs == [0, 1])
        #expect(try joined.key(epoch: 0) == Fixture.secret(0xEE))
        #expect(try joined.key(epoch: 1) == d[0].replica.circle.key(epoch: 1))
        #expect(joined.activeDevices == [d[0].id, newID].sorted())
        #expect(joined.members[d[1].id]?.removedAfter == 0)

        var replica = try SyncReplica(signer: newcomer, circle: joined, clock: HybridLogicalClock(source: d[0].clock))
        #expect(try replica.apply(first.bytes) == .applied(old, clockAhead: false))
        #expect(try replica.apply(second.bytes) == .applied(new, clockAhead: false))
        #expect(Fixture.text(replica.liveItems[old]?.body.secret) == "zero")
        #expect(Fixture.text(replica.liveItems[new]?.body.secret) == "one")
        #expect(replica.stateDigest == d[0].replica.stateDigest)
    }

    /// The keys are sealed to the new device only; altering any byte of a v2 approval is refused.
    @Test func aV2ApprovalOpensForItsDeviceOnlyAndRefusesAlteration() throws {
        let approver = Fixture.signer(1)
        let approverID = try DeviceID(approver.publicKey)
        var circle = Circle(devices: [approverID], epoch: 0, key: Fixture.secret(0xEE))
        try circle.rotate()
        try circle.rotate()
        let newcomer = Fixture.signer(9)
        let approval = try Enrollment.approve(try DeviceID(newcomer.publicKey), circle: &circle, signer: approver)
        #expect(try Enrollment.accept(approval, from: approverID, as: newcomer).epochs == [0, 1, 2])
        #expect(throws: SyncError.malformed("the approval names another device")) {
            _ = try Enrollment.accept(approval, from: approverID, as: Fixture.signer(5))
        }
        for i in approval.indices {
            var b = approval
            b[i] ^= 1
            #expect(throws: SyncError.self) { _ = try Enrollment.accept(b, from: approverID, as: newcomer) }
        }
    }

    /// An approval in the version 1 layout (one sealed key, the current epoch's) still joins.
    @Test func aVersion1ApprovalIsStillAccepted() throws {
        let approver = Fixture.signer(1)
        let approverID = try DeviceID(approver.publicKey)
        let newcomer = Fixture.signer(9)
        let newID = try DeviceID(newcomer.publicKey)
        var w = ByteWriter()
        w.raw(Array("ARA1".utf8))
        w.raw(approverID.bytes)
        w.raw(newID.bytes)
        w.u32(3)
        let members = [approverID, newID].sorted()
        w.u16(UInt16(members.count))
        for m in members {
            w.raw(m.bytes)
            w.u64(0)
        }
        w.lengthPrefixed(try SealedKeyBox.seal(Fixture.secret(0xAB), to: newID.bytes))
        w.raw(try approver.sign(Array("arca-sync-approval-v1".utf8) + w.bytes))
        let joined = try Enrollment.accept(w.bytes, from: approverID, as: newcomer)
        #expect(joined.currentEpoch == 3)
        #expect(joined.epochs == [3])
        #expect(try joined.key(epoch: 3) == Fixture.secret(0xAB))
        // The v1 bytes under the v2 signature domain (or the reverse) do not verify.
        var v2Signed = Array(w.bytes.dropLast(64))
        v2Signed += try approver.sign(Array("arca-sync-approval-v2".utf8) + v2Signed)
        #expect(throws: SyncError.forged(approverID)) {
            _ = try Enrollment.accept(v2Signed, from: approverID, as: newcomer)
        }
    }
}
