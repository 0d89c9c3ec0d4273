import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// A machine approved after a removal rotated the epoch gets every epoch key its approver
/// holds (issue 17): it opens the records of epoch 0 as well as epoch 1.
@Suite("arcad sync: a join after a rotation (root)", .serialized)
struct SyncEpochJoinDaemonTests {
    let alice: UInt32 = 60_199

    @Test("a machine joined after a rotation reads the items of epoch 0 and epoch 1")
    func joinAfterRotation() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        #expect(circle.addSynced(0, "old", "epoch-0") == .items([]))
        circle.exchangeAll()
        guard let removal = circle.remove(1) else { return }
        #expect(removal.epoch == 1)
        #expect(circle.addSynced(0, "new", "epoch-1") == .items([]))
        let c = try TestDaemon()
        circle.machines.append(c)
        circle.keys.append(try enrolled(c, alice))
        try circle.join(2)
        #expect(circle.status(2)?.epoch == 1)
        #expect(circle.status(2)?.queued == 0)
        #expect(circle.synced(2, "old") == "epoch-0")
        #expect(circle.synced(2, "new") == "epoch-1")
        #expect(try circle.digest(2) == circle.digest(0))
        // C's own record, under epoch 1, opens on A.
        #expect(circle.addSynced(2, "from-c", "c") == .items([]))
        circle.carry(2, 0)
        #expect(circle.synced(0, "from-c") == "c")
    }
}
