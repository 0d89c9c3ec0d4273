import ArcaCrypto
import Testing

@testable import ArcaSync

/// A burial in a snapshot reaches no further than the snapshot's own cut, and the cut counts
/// only as far as this device can check it against the logs it holds (issue 17, review of the
/// horizon work). The attacker is a member (C) that signs a forged snapshot with its own key.
@Suite struct BurialCutTests {
    /// A, B, C. A creates "x" (A:1) and edits it (A:2); B and C apply both.
    private func xEdited() throws -> (d: [TestDevice], x: ItemRef, edit: SyncRecord) {
        var d = Fixture.circle(3)
        let (x, created) = try d[0].replica.create(Fixture.body("x", "x-1"))
        let edit = try d[0].replica.write(ref: x, body: Fixture.body("x", "x-2"))
        for i in 1...2 {
            try d[i].replica.apply(created.bytes)
            try d[i].replica.apply(edit.bytes)
        }
        return (d, x, edit)
    }

    /// C's signed snapshot number 1 with the given cut and one burial of `x`.
    private func forged(
        by c: TestDevice, cut: [DeviceID: CutPoint], burying x: ItemRef, reach: [DeviceID: UInt64]
    ) throws -> [UInt8] {
        try Snapshot.seal(
            SnapshotContents(cut: cut, burials: [x: reach], records: []), number: 1, epoch: 0,
            epochKey: Fixture.secret(0xEE), signer: c.signer
        ).bytes
    }

    @Test func aBurialPastTheSnapshotsOwnCutIsRefusedAndChangesNothing() throws {
        var (d, x, edit) = try xEdited()
        let a = d[0].id
        let bytes = try forged(
            by: d[2], cut: [a: CutPoint(seq: 2, hash: edit.hash)], burying: x, reach: [a: 1_000])
        let digest = d[1].replica.stateDigest
        #expect(
            throws: SyncError.malformed(
                "snapshot 1 of device \(d[2].id.short) buries item \(x) past its own cut (record 1000 of device \(a.short))"
            )
        ) { try d[1].replica.adopt(snapshot: bytes) }
        #expect(d[1].replica.stateDigest == digest)
        #expect(d[1].replica.items[x]?.isLive == true)
        // A's next edit wins as ever (on the code before the rule, it was dropped: covered).
        let later = try d[0].replica.write(ref: x, body: Fixture.body("x", "x-3"))
        try d[1].replica.apply(later.bytes)
        #expect(Fixture.text(d[1].replica.liveItems[x]?.body.secret) == "x-3")
    }

    @Test func aCutMadeUpPastTheLogHereBuriesNoLaterEdit() throws {
        var (d, x, _) = try xEdited()
        let a = d[0].id
        // A cut far past A's log, with a hash no record of A has: checkable only when A gets there.
        let bytes = try forged(
            by: d[2], cut: [a: CutPoint(seq: 1_000, hash: Digest.of([1, 2, 3]))], burying: x, reach: [a: 1_000])
        #expect(try d[1].replica.adopt(snapshot: bytes) == .adopted(resynced: 1))
        // Up to the log held here (A:2) the burial applies, as a true one would: x is buried.
        #expect(d[1].replica.items[x]?.buried == true)
        #expect(d[1].replica.items[x]?.burialCut == [a: 2])
        #expect(d[1].replica.items[x]?.versions.count == 0)
        // A's later edit (A:3) is past what the burial may cover here: a late sibling, never dropped.
        let later = try d[0].replica.write(ref: x, body: Fixture.body("x", "x-3"))
        #expect(try d[1].replica.apply(later.bytes) == .applied(x, clockAhead: false))
        #expect(d[1].replica.conflicts[x].map { $0.map { Fixture.text($0.body.secret) } } == ["x-3"])
        #expect(d[1].replica.items[x]?.burialCut == [a: 2])
    }

    @Test func aCutWhoseHashTheRecordThereDoesNotHaveIsReportedAndBuriesNothingMore() throws {
        var (d, x, _) = try xEdited()
        let a = d[0].id
        let bytes = try forged(
            by: d[2], cut: [a: CutPoint(seq: 3, hash: Digest.of([9]))], burying: x, reach: [a: 3])
        #expect(try d[1].replica.adopt(snapshot: bytes) == .adopted(resynced: 1))
        let later = try d[0].replica.write(ref: x, body: Fixture.body("x", "x-3"))
        try d[1].replica.apply(later.bytes)
        #expect(d[1].replica.conflicts[x].map { $0.map { Fixture.text($0.body.secret) } } == ["x-3"])
        #expect(d[1].replica.items[x]?.burialCut == [a: 2])
        #expect(d[1].replica.pendingBurials.isEmpty)
        #expect(
            d[1].replica.reports.last
                == .refused(
                    .malformed(
                        "snapshot 1 of device \(d[2].id.short) names record 3 of device \(a.short) with another "
                            + "hash: its burials past the log here are not applied")))
    }

    @Test func aTrueCutPastTheLogHereAppliesInFullWhenTheRecordArrives() throws {
        var (d, x, _) = try xEdited()
        let a = d[0].id
        // A deletes x (A:3); C applies it and buries x with its true cut; B has not seen the delete.
        let delete = try d[0].replica.delete(x)
        try d[2].replica.apply(delete.bytes)
        #expect(d[2].replica.bury([x]) == [x])
        let snapshot = try d[2].replica.makeSnapshot()
        #expect(try d[1].replica.adopt(snapshot: snapshot.bytes) == .adopted(resynced: 1))
        #expect(d[1].replica.items[x]?.burialCut == [a: 2])
        #expect(d[1].replica.pendingBurials[a]?[3]?.count == 1)
        // The delete arrives: it is the record the cut names, so the burial now covers it too.
        try d[1].replica.apply(delete.bytes)
        #expect(d[1].replica.items[x]?.burialCut == [a: 3])
        #expect(d[1].replica.items[x]?.versions.count == 0)
        #expect(d[1].replica.pendingBurials.isEmpty)
        #expect(d[1].replica.stateDigest == d[2].replica.stateDigest)
    }

    @Test func aNewerSnapshotOfTheSameAuthorReplacesItsWaitingBurials() throws {
        var (d, x, _) = try xEdited()
        let a = d[0].id
        var waiting: [UInt8] = []
        for number in UInt64(1)...5 {
            waiting = try Snapshot.seal(
                SnapshotContents(
                    cut: [a: CutPoint(seq: 100 + number, hash: Digest.of([UInt8(number)]))],
                    burials: [x: [a: 100 + number]], records: []),
                number: number, epoch: 0, epochKey: Fixture.secret(0xEE), signer: d[2].signer
            ).bytes
            try d[1].replica.adopt(snapshot: waiting)
        }
        // Only the last snapshot's burial waits (at A:105); the four before it are gone.
        #expect(d[1].replica.pendingBurials.count == 1)
        #expect(d[1].replica.pendingBurials[a]?.keys.sorted() == [105])
        #expect(d[1].replica.pendingBurials[a]?[105]?.map(\.number) == [5])
    }
}
