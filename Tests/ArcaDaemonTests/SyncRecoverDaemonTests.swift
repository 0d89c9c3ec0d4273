import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// `arca sync recover` (issue 17): every device lost, a fresh machine with a copy of the
/// synced folder and the vault's recovery key takes the circle over.
@Suite("arcad sync: recovering the circle with the recovery key (root)", .serialized)
struct SyncRecoverDaemonTests {
    let uid: UInt32 = 60_417

    /// What the agent would offer from the folder: every machine's recovery seals and heads.
    private func sealsAndHeads(_ circle: SyncCircle, _ machines: [Int]) -> [SyncFile] {
        machines.flatMap { index -> [SyncFile] in
            guard case .syncOutbox(let o) = circle.machines[index].send(.syncPull(uid: uid, after: 0), as: uid) else {
                return []
            }
            return o.approvals.filter { RecoverySeal.isSeal($0.bytes) }.map {
                SyncFile(kind: .approval, author: o.device, bytes: $0.bytes)
            } + [SyncFile(kind: .head, author: o.device, bytes: o.head)]
        }
    }

    /// Machine `index`'s records and head, as the agent pushes them.
    private func records(_ circle: SyncCircle, _ index: Int) -> [SyncFile] {
        guard case .syncOutbox(let o) = circle.machines[index].send(.syncPull(uid: uid, after: 0), as: uid) else {
            return []
        }
        return o.records.map { SyncFile(kind: .record, author: o.device, bytes: $0.bytes) }
            + [SyncFile(kind: .head, author: o.device, bytes: o.head)]
    }

    private func recoveryKeyText(_ t: TestDaemon, key: [UInt8]) -> [UInt8]? {
        guard case .recoveryKey(let text) = t.send(.rotateRecoveryKey(uid: uid, key: key), as: uid) else { return nil }
        return text
    }

    @Test("a wrong key changes nothing; the right one takes the circle over, replays, and the circle goes on")
    func recoverTheCircle() throws {
        let circle = try SyncCircle(uid: uid, count: 2)
        defer { circle.cleanUp() }
        let recovery = try #require(recoveryKeyText(circle.machines[0], key: circle.keys[0]))
        #expect(circle.addSynced(0, "from-a", "secret-a") == .items([]))
        #expect(circle.addSynced(1, "from-b", "secret-b") == .items([]))
        circle.exchangeAll()
        let epochBefore = try #require(circle.status(0)).epoch
        let seqA = try #require(circle.status(0)).seq
        let seqB = try #require(circle.status(1)).seq
        #expect(seqA >= 1 && seqB >= 1)

        // Both machines are lost. A fresh machine, its own vault (and its own recovery key).
        let fresh = try TestDaemon(config: DaemonConfig())
        circle.machines.append(fresh)
        circle.keys.append(try enrolled(fresh, uid))
        let offered = sealsAndHeads(circle, [0, 1])
        #expect(offered.filter { $0.kind == .approval }.count == 1)

        // Another vault's (well-formed) recovery key: refused, and nothing is set up.
        let other = try #require(recoveryKeyText(fresh, key: circle.keys[2]))
        guard
            case .error(let refusal, let message) = fresh.send(
                .syncRecover(uid: uid, files: offered, secret: other), as: uid)
        else {
            Issue.record("a wrong recovery key was accepted")
            return
        }
        #expect(refusal == .authFailed)
        #expect(message == "the recovery key opens no recovery seal in the synced folder; nothing changed")
        guard case .error(let notSetUp, _) = fresh.send(.syncStatus(uid: uid), as: uid) else {
            Issue.record("sync is set up after a wrong key")
            return
        }
        #expect(notSetUp == .itemNotFound)
        #expect(!FileManager.default.fileExists(atPath: SyncIdentityStore.path(fresh.directory, uid: uid)))
        // No seal at all (only heads): refused the same way.
        guard
            case .error(.authFailed, _) = fresh.send(
                .syncRecover(uid: uid, files: offered.filter { $0.kind == .head }, secret: recovery), as: uid)
        else {
            Issue.record("a recovery without a seal was accepted")
            return
        }

        // The printed key: a new device that holds the circle alone, in a new epoch.
        guard case .syncDevice(let id) = fresh.send(.syncRecover(uid: uid, files: offered, secret: recovery), as: uid)
        else {
            Issue.record("recover failed")
            return
        }
        #expect(id.count == 32 && id != circle.devices[0] && id != circle.devices[1])
        circle.devices.append(id)
        let status = try #require(circle.status(2))
        #expect(status.device == id)
        #expect(status.epoch == epochBefore + 1)
        let removed: [[UInt8]: UInt64?] = Dictionary(
            uniqueKeysWithValues: status.devices.map { ($0.id, $0.removedAfter) })
        #expect(removed.count == 3)
        #expect(removed[circle.devices[0]] == .some(seqA))
        #expect(removed[circle.devices[1]] == .some(seqB))
        #expect(removed[id] == .some(UInt64?.none))
        // A second recover here is refused: it is set up now.
        guard
            case .error(.duplicateItem, _) = fresh.send(
                .syncRecover(uid: uid, files: offered, secret: recovery), as: uid)
        else {
            Issue.record("a second recover was accepted")
            return
        }

        // The old devices' records replay into the new vault.
        let outcomes = circle.push(records(circle, 0) + records(circle, 1), to: 2)
        #expect(outcomes.allSatisfy { $0.code == .applied || $0.code == .duplicate }, "\(outcomes)")
        #expect(circle.synced(2, "from-a") == "secret-a")
        #expect(circle.synced(2, "from-b") == "secret-b")

        // A lost device that turns up again: its later records are refused.
        #expect(circle.addSynced(0, "late", "stolen") == .items([]))
        let late = circle.push(records(circle, 0), to: 2)
        #expect(late.contains { $0.code == .refused })
        #expect(circle.synced(2, "late") == "error \(ArcaStatus.itemNotFound.rawValue)")

        // The circle goes on: a new machine joins the recovered device and reads what it writes.
        let next = try TestDaemon(config: DaemonConfig())
        circle.machines.append(next)
        circle.keys.append(try enrolled(next, uid))
        guard case .syncDevice(let nextID) = next.send(.syncJoin(uid: uid, approver: id), as: uid),
            case .syncApproval(_, let sas) = fresh.send(
                .syncApprove(uid: uid, device: nextID, shortAuthenticationString: nil), as: uid),
            case .syncApproval(let approval, _) = fresh.send(
                .syncApprove(uid: uid, device: nextID, shortAuthenticationString: sas), as: uid),
            !approval.isEmpty
        else {
            Issue.record("joining the recovered circle failed")
            return
        }
        circle.devices.append(nextID)
        #expect(circle.addSynced(2, "after", "secret-after") == .items([]))
        circle.carry(2, 3)
        #expect(circle.synced(3, "after") == "secret-after")
        // The old devices' directories are still in the folder: their records up to the cut-off apply there too.
        _ = circle.push(records(circle, 0) + records(circle, 1), to: 3)
        #expect(circle.synced(3, "from-a") == "secret-a")
        #expect(circle.synced(3, "from-b") == "secret-b")
        #expect(circle.synced(3, "late") == "error \(ArcaStatus.itemNotFound.rawValue)")
    }
}
