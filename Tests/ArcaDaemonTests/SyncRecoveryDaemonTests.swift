import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault
import Foundation
import Testing

@testable import ArcaDaemon

/// The epoch keys sealed to the vault's recovery key (issue 17): arcad keeps only the public
/// recovery identity, seals at every rotation, and publishes the seal in the outbox.
@Suite("arcad sync: epoch keys sealed to the recovery key (root)", .serialized)
struct SyncRecoveryDaemonTests {
    let alice: UInt32 = 60_196

    /// The recovery seal machine `index` publishes, if any.
    private func published(_ circle: SyncCircle, _ index: Int, for recovery: [UInt8]) -> [UInt8]? {
        guard case .syncOutbox(let outbox) = circle.machines[index].send(.syncPull(uid: alice, after: 0), as: alice)
        else { return nil }
        return outbox.approvals.first { $0.device == recovery }?.bytes
    }

    @Test("a rotated recovery key gets the epoch keys; a removal seals the new epoch to it too")
    func sealedToTheRecoveryKey() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "old", "epoch-0") == .items([]))
        circle.exchangeAll()
        guard
            case .recoveryKey(let text) = circle.machines[0].send(
                .rotateRecoveryKey(uid: alice, key: circle.keys[0]), as: alice)
        else {
            Issue.record("rotate failed")
            return
        }
        var textBytes = text
        let recovery = try RecoveryKey(parsing: try SecretBytes(consuming: &textBytes))
        let publicKey = try RecoverySeal.publicKey(recoveryKey: recovery.key)
        let file = SyncStore(stateDirectory: circle.machines[0].directory, uid: alice).recoveryPath
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(publicKey))
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        let a = circle.devices[0]
        guard let first = published(circle, 0, for: publicKey) else {
            Issue.record("no recovery seal published")
            return
        }
        #expect(try RecoverySeal.open(first, from: DeviceID(a), recoveryKey: recovery.key).epochs == [0])

        guard let removal = circle.remove(1) else { return }
        #expect(removal.epoch == 1)
        guard let second = published(circle, 0, for: publicKey) else {
            Issue.record("no recovery seal after the removal")
            return
        }
        let opened = try RecoverySeal.open(second, from: DeviceID(a), recoveryKey: recovery.key)
        #expect(opened.epochs == [0, 1])
        #expect(opened.activeDevices == [try DeviceID(a)])
        // Only the recovery key opens it: another vault's recovery key does not.
        #expect(throws: SyncError.self) {
            _ = try RecoverySeal.open(second, from: DeviceID(a), recoveryKey: SecretBytes(count: 32))
        }
        // The removed device is not sent the new epoch key; the seal is no member.
        #expect(circle.status(0)?.devices.count == 2)
        // A restart publishes the same seal again (it is journaled).
        let restarted = try circle.machines[0].restarted()
        restarted.daemon.restoreParkedKeys()
        circle.machines[0] = restarted
        #expect(published(circle, 0, for: publicKey) == second)
    }
}
