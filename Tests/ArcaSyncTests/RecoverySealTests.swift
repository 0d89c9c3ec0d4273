import ArcaCrypto
import Testing

@testable import ArcaSync

/// Epoch keys sealed to the recovery key's identity: opened with the recovery key only,
/// every epoch included, and never confused with an approval.
@Suite struct RecoverySealTests {
    @Test func everyEpochKeyOpensWithTheRecoveryKeyAfterARotation() throws {
        var d = Fixture.circle(2)
        let (old, first) = try d[0].replica.create(Fixture.body("epoch0", "zero"))
        try d[0].replica.circle.remove(d[1].id, lastAccepted: 0)
        #expect(try d[0].replica.circle.rotate() == 1)
        let (new, second) = try d[0].replica.create(Fixture.body("epoch1", "one"))
        let recovery = Fixture.secret(0x42)
        let publicKey = try RecoverySeal.publicKey(recoveryKey: recovery)
        #expect(publicKey.count == 32)
        #expect(publicKey == (try RecoverySeal.publicKey(recoveryKey: Fixture.secret(0x42))))  // deterministic
        let sealed = try RecoverySeal.seal(d[0].replica.circle, to: publicKey, signer: d[0].signer)
        #expect(Array(sealed.prefix(4)) == Array("ARK1".utf8))
        #expect(d[0].replica.circle.members.count == 2)  // the recovery identity is no member

        let circle = try RecoverySeal.open(sealed, from: d[0].id, recoveryKey: recovery)
        #expect(circle.epochs == [0, 1])
        #expect(circle.currentEpoch == 1)
        #expect(try circle.key(epoch: 0) == Fixture.secret(0xEE))
        #expect(try circle.key(epoch: 1) == d[0].replica.circle.key(epoch: 1))
        #expect(circle.activeDevices == [d[0].id])
        #expect(circle.members[d[1].id]?.removedAfter == 0)
        // A replica under the recovery identity reads the records of both epochs.
        var reader = try SyncReplica(
            signer: RecoverySeal.identity(recoveryKey: recovery), circle: circle,
            clock: HybridLogicalClock(source: d[0].clock))
        #expect(try reader.apply(first.bytes) == .applied(old, clockAhead: false))
        #expect(try reader.apply(second.bytes) == .applied(new, clockAhead: false))
        #expect(Fixture.text(reader.liveItems[old]?.body.secret) == "zero")
        #expect(Fixture.text(reader.liveItems[new]?.body.secret) == "one")
    }

    /// Attacks: another recovery key, altered bytes, a seal passed off as an approval (or the
    /// reverse), a seal claimed by another author.
    @Test func aSealOpensForTheRecoveryKeyAloneAndIsNoApproval() throws {
        let signer = Fixture.signer(1)
        let author = try DeviceID(signer.publicKey)
        var circle = Circle(devices: [author], epoch: 0, key: Fixture.secret(0xEE))
        let recovery = Fixture.secret(0x42)
        let sealed = try RecoverySeal.seal(
            circle, to: RecoverySeal.publicKey(recoveryKey: recovery), signer: signer)
        #expect(throws: SyncError.malformed("the approval names another device")) {
            _ = try RecoverySeal.open(sealed, from: author, recoveryKey: Fixture.secret(0x43))
        }
        #expect(throws: SyncError.forged(author)) {
            _ = try RecoverySeal.open(sealed, from: try DeviceID(Fixture.signer(2).publicKey), recoveryKey: recovery)
        }
        for i in sealed.indices {
            var b = sealed
            b[i] ^= 1
            #expect(throws: SyncError.self) { _ = try RecoverySeal.open(b, from: author, recoveryKey: recovery) }
        }
        let identity = try RecoverySeal.identity(recoveryKey: recovery)
        #expect(throws: SyncError.malformed("not an approval")) {
            _ = try Enrollment.accept(sealed, from: author, as: identity)
        }
        let approval = try Enrollment.approve(try DeviceID(identity.publicKey), circle: &circle, signer: signer)
        #expect(throws: SyncError.malformed("not a recovery seal")) {
            _ = try RecoverySeal.open(approval, from: author, recoveryKey: recovery)
        }
    }
}
