import ArcaCrypto
import ArcaProtocol
import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// Attacks on sync (issue 17): altered, forged, replayed and rolled-back files, a removed
/// device, another person's circle, another user. Each is refused, reported per file and in
/// the status, and changes nothing.
@Suite("arcad sync refusals (root)", .serialized)
struct SyncRefusalDaemonTests {
    let alice: UInt32 = 60_193
    let bob: UInt32 = 60_194

    @Test("a flipped byte, a record under another author's folder, an old head: refused, reported, nothing changed")
    func alteredFilesAreRefused() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        circle.addSynced(0, "mail", "v1")
        circle.carry(0, 1)
        let oldHead = try #require(circle.files(of: 0, for: 1).first { $0.kind == .head })
        _ = circle.updateSynced(0, "mail", "v2")
        let record = try #require(circle.files(of: 0, for: 1).filter { $0.kind == .record }.last)
        let digest = try circle.digest(1)
        // Every byte position class: header, wrapped key, body, signature.
        for position in [10, 120, record.bytes.count / 2, record.bytes.count - 1] {
            var flipped = record
            flipped.bytes[position] ^= 0x01
            let outcome = circle.push([flipped], to: 1)
            #expect(outcome.map(\.code) == [.refused], "byte \(position)")
        }
        // The genuine record signed by A, pushed as if from B's folder.
        var misfiled = record
        misfiled.author = circle.devices[1]
        #expect(circle.push([misfiled], to: 1).map(\.code) == [.refused])
        #expect(try circle.digest(1) == digest)
        #expect(circle.synced(1, "mail") == "v1")
        circle.carry(0, 1)
        #expect(circle.synced(1, "mail") == "v2")
        // A's head from before its last record: a rollback.
        let rolledBack = circle.push([oldHead], to: 1)
        #expect(rolledBack.map(\.code) == [.refused])
        #expect(
            rolledBack.first?.message == "device \(try DeviceID(circle.devices[0]).short) head rolled back from 2 to 1")
        let reports = circle.status(1)?.reports ?? []
        #expect(reports.filter { $0.contains("bad signature") }.count == 4)
        #expect(reports.contains { $0.contains("rolled back from 2 to 1") })
        #expect(circle.synced(1, "mail") == "v2")
    }

    @Test("records of a circle this device is not in (another person's) never land in the vault")
    func anotherCircleIsRefused() throws {
        let mine = try SyncCircle(uid: alice, count: 1)
        defer { mine.cleanUp() }
        let theirs = try SyncCircle(uid: alice, count: 1)
        defer { theirs.cleanUp() }
        theirs.addSynced(0, "foreign", "not-yours")
        let files = theirs.files(of: 0, for: 0)
        // An unknown author may be a member this machine has not heard of yet: kept, not applied.
        for _ in 0..<2 {
            let outcomes = mine.push(files, to: 0)
            #expect(outcomes.count == 2 && outcomes.allSatisfy { $0.code == .queued })
            #expect(outcomes.first?.message.hasPrefix(Daemon.circleWait + "record from unknown device") == true)
        }
        #expect(mine.synced(0, "foreign") == "error -25300")
        #expect(mine.status(0)?.devices.count == 1)
        #expect(mine.status(0)?.queued == 2, "kept once, however often pushed")
        let queue = SyncStore(stateDirectory: mine.machines[0].directory, uid: alice).queuePath
        #expect(!contains(try [UInt8](Data(contentsOf: URL(fileURLWithPath: queue))), "not-yours"))
    }

    @Test("a new member's record that arrives before the circle update naming it waits, then applies")
    func newMemberBeforeCircleUpdate() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        let c = try TestDaemon()
        circle.machines.append(c)
        circle.keys.append(try enrolled(c, alice))
        try circle.join(2)
        circle.addSynced(2, "from-c", "early")
        let fromC = circle.files(of: 2, for: 1).filter { $0.kind != .approval }
        #expect(circle.push(fromC, to: 1).allSatisfy { Daemon.waitsForCircle($0) })
        #expect(circle.synced(1, "from-c") == "error -25300")
        circle.carry(0, 1)  // A's circle update names C
        #expect(circle.synced(1, "from-c") == "early")
        #expect(circle.status(1)?.queued == 0)
    }

    @Test("a removed device's later records are refused everywhere; the epoch rotates on the rest")
    func removedDeviceIsRefused() throws {
        let circle = try SyncCircle(uid: alice, count: 3)
        defer { circle.cleanUp() }
        circle.addSynced(2, "from-c", "before")
        circle.exchangeAll()
        #expect(circle.synced(1, "from-c") == "before")
        guard let removal = circle.remove(2) else { return }
        #expect(removal.epoch == 1)
        #expect(removal.seenItems == ["from-c/alice"])
        // C, not knowing yet, writes again; A tells B about the removal.
        circle.addSynced(2, "after", "too-late")
        circle.carry(0, 1)
        #expect(circle.status(1)?.epoch == 1)
        for target in [0, 1] {
            let outcomes = circle.carry(2, target)
            #expect(outcomes.contains { $0.code == .refused && $0.message.contains("from removed device") })
            #expect(circle.synced(target, "after") == "error -25300")
            #expect(circle.synced(target, "from-c") == "before")
            let c = circle.status(target)?.devices.first { $0.id == circle.devices[2] }
            #expect(c?.removedAfter == 1)
        }
        // The new epoch key went to B only: A's approvals name no file for C any more.
        guard case .syncOutbox(let outbox) = circle.machines[0].send(.syncPull(uid: alice, after: 0), as: alice) else {
            return
        }
        #expect(outbox.approvals.map(\.device) == [circle.devices[1]])
        // New records on A are sealed under epoch 1 and still open on B.
        circle.addSynced(0, "fresh", "epoch-1")
        circle.carry(0, 1)
        #expect(circle.synced(1, "fresh") == "epoch-1")
    }

    /// Attack: bob asks arcad for alice's outbox, pushes into her replica, reads her status.
    @Test("another user cannot pull, push, approve, remove or read someone's sync: -34018")
    func otherUsers() throws {
        let circle = try SyncCircle(uid: alice, count: 2)
        defer { circle.cleanUp() }
        circle.addSynced(0, "mail", "s3cret")
        let a = circle.machines[0]
        let files = circle.files(of: 0, for: 1)
        let requests: [Request] = [
            .syncPull(uid: alice, after: 0), .syncPush(uid: alice, files: files), .syncStatus(uid: alice),
            .syncConflicts(uid: alice), .syncRemove(uid: alice, device: circle.devices[1]),
            .syncApprove(uid: alice, device: [UInt8](repeating: 7, count: 32), shortAuthenticationString: nil),
            .syncJoin(uid: alice, approver: circle.devices[1]),
            .syncResolve(uid: alice, item: [UInt8](repeating: 0, count: 16), keep: [UInt8](repeating: 0, count: 32)),
        ]
        for request in requests { #expect(statusCode(circle.machines[1].send(request, as: bob)) == -34018) }
        #expect(statusCode(a.send(.syncPull(uid: alice, after: 0), as: bob)) == -34018)
        // Bob's own vault, even with a circle of his own, takes none of alice's records.
        _ = try enrolled(circle.machines[1], bob)
        _ = circle.machines[1].send(.syncInit(uid: bob), as: bob)
        guard case .syncPushResult(let outcomes) = circle.machines[1].send(.syncPush(uid: bob, files: files), as: bob)
        else {
            Issue.record("push failed")
            return
        }
        // Alice's approval is refused; her records and head wait, since bob's circle never names her device.
        #expect(outcomes.allSatisfy { $0.code == .refused || Daemon.waitsForCircle($0) })
        #expect(outcomes.contains { $0.code == .refused } && !outcomes.contains { $0.code == .applied })
        var attributes = genp("mail", "alice")
        attributes[.synchronizable] = .bool(true)
        let query = Query(itemClass: .genericPassword, attributes: attributes, returnFlags: .data)
        #expect(
            secretText(circle.machines[1].send(.copyMatching(vault: .user(uid: bob), query: query), as: bob))
                == "error -25300")
    }

    @Test("approve checks the short authentication string; join is refused once set up; not set up: -25300")
    func enrollmentRules() throws {
        let circle = try SyncCircle(uid: alice, count: 1)
        defer { circle.cleanUp() }
        let other = try TestDaemon()
        defer { other.cleanUp() }
        _ = try enrolled(other, alice)
        #expect(statusCode(other.send(.syncStatus(uid: alice), as: alice)) == -25300)
        guard case .syncDevice(let id) = other.send(.syncJoin(uid: alice, approver: circle.devices[0]), as: alice)
        else {
            Issue.record("join failed")
            return
        }
        guard case .syncStatus(let waiting) = other.send(.syncStatus(uid: alice), as: alice) else { return }
        #expect(waiting.device == id && waiting.awaitingApprovalFrom == circle.devices[0])
        let sas = Enrollment.shortAuthenticationString(try DeviceID(circle.devices[0]), try DeviceID(id))
        let wrong = sas == "000000" ? "000001" : "000000"
        #expect(
            statusCode(
                circle.machines[0].send(
                    .syncApprove(uid: alice, device: id, shortAuthenticationString: wrong), as: alice)) == -25293)
        #expect(circle.status(0)?.devices.count == 1)
        #expect(statusCode(other.send(.syncJoin(uid: alice, approver: circle.devices[0]), as: alice)) == -25299)
        #expect(statusCode(circle.machines[0].send(.syncJoin(uid: alice, approver: id), as: alice)) == -25299)
    }
}
