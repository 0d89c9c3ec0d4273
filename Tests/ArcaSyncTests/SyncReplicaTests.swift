import ArcaCrypto
import Testing

@testable import ArcaSync

@Suite struct SyncReplicaTests {
    @Test func anItemAddedOnAIsReadableOnB() throws {
        var d = Fixture.circle(2)
        let (ref, record) = try d[0].replica.create(Fixture.body("svc=mail", "s3cret"))
        #expect(try d[1].replica.apply(record.bytes) == .applied(ref, clockAhead: false))
        let item = try #require(d[1].replica.liveItems[ref])
        #expect(item.attributesText == "svc=mail")
        #expect(Fixture.text(item.body.secret) == "s3cret")
        #expect(d[1].replica.takeChanges() == [ref])
        #expect(d[1].replica.takeChanges() == [])
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
    }

    @Test func reapplyingARecordChangesNothing() throws {
        var d = Fixture.circle(2)
        let (_, record) = try d[0].replica.create(Fixture.body("a", "b"))
        try d[1].replica.apply(record.bytes)
        let digest = d[1].replica.stateDigest
        #expect(try d[1].replica.apply(record.bytes) == .duplicate)
        #expect(try d[0].replica.apply(record.bytes) == .duplicate)  // its own record, seen in the folder
        #expect(d[1].replica.stateDigest == digest)
    }

    @Test func outOfOrderRecordsWaitForTheirPredecessors() throws {
        var d = Fixture.circle(2)
        let (ref, r1) = try d[0].replica.create(Fixture.body("v1", "1"))
        let r2 = try d[0].replica.write(ref: ref, body: Fixture.body("v2", "2"))
        let r3 = try d[0].replica.write(ref: ref, body: Fixture.body("v3", "3"))
        #expect(try d[1].replica.apply(r3.bytes) == .queued)
        #expect(try d[1].replica.apply(r2.bytes) == .queued)
        #expect(try d[1].replica.apply(r3.bytes) == .duplicate)
        #expect(d[1].replica.appliedSeq(of: d[0].id) == 0)
        #expect(try d[1].replica.apply(r1.bytes) == .applied(ref, clockAhead: false))
        #expect(d[1].replica.appliedSeq(of: d[0].id) == 3)
        #expect(d[1].replica.liveItems[ref]?.attributesText == "v3")
        #expect(d[1].replica.conflicts.isEmpty)
    }

    /// Attack: one byte flipped anywhere in a record; every position is refused and nothing changes.
    @Test func aFlippedByteAnywhereIsRefused() throws {
        var d = Fixture.circle(2)
        let (_, record) = try d[0].replica.create(Fixture.body("svc", "secret"))
        let before = d[1].replica.stateDigest
        for i in record.bytes.indices {
            var bytes = record.bytes
            bytes[i] ^= 0x01
            #expect(throws: SyncError.self) { try d[1].replica.apply(bytes) }
        }
        #expect(d[1].replica.stateDigest == before)
        #expect(d[1].replica.appliedSeq(of: d[0].id) == 0)
        var body = record.bytes
        body[body.count - 70] ^= 0x80  // in the sealed body
        #expect(throws: SyncError.forged(d[0].id)) { try d[1].replica.apply(body) }
        try d[1].replica.apply(record.bytes)  // the genuine record still applies
        #expect(d[1].replica.appliedSeq(of: d[0].id) == 1)
    }

    @Test func aDeviceOutsideTheCircleIsRefused() throws {
        var d = Fixture.circle(2)
        var outsider = Fixture.circle(3)[2]  // same epoch key, but not in d's circle
        let (_, record) = try outsider.replica.create(Fixture.body("x", "y"))
        #expect(throws: SyncError.unknownDevice(outsider.id)) { try d[1].replica.apply(record.bytes) }
    }

    /// Attack: the author's key signs two different logs (a restored old device, or a stolen key).
    @Test func twoRecordsWithOneSequenceNumberAreRefused() throws {
        var d = Fixture.circle(2)
        var twin = Fixture.circle(2)[0]  // the same signing key, an independent log
        let (_, first) = try d[0].replica.create(Fixture.body("one", "1"))
        let (_, other) = try twin.replica.create(Fixture.body("two", "2"))
        try d[1].replica.apply(first.bytes)
        #expect(throws: SyncError.equivocation(d[0].id, seq: 1)) { try d[1].replica.apply(other.bytes) }
    }

    @Test func aRecordThatDoesNotFollowItsLogIsRefused() throws {
        var d = Fixture.circle(2)
        let (ref, first) = try d[0].replica.create(Fixture.body("one", "1"))
        try d[1].replica.apply(first.bytes)
        let skipping = try SyncRecord.seal(
            header: RecordHeader(
                ref: ref, clock: HLCTimestamp(wallMillis: 2_000_000, counter: 0), author: d[0].id, seq: 2,
                previous: .zero, deleted: false, epoch: 0, parents: [first.hash]),
            body: Fixture.body("two", "2"), epochKey: Fixture.secret(0xEE), signer: d[0].signer)
        #expect(throws: SyncError.chainBroken(d[0].id, seq: 2)) { try d[1].replica.apply(skipping.bytes) }
    }

    /// Attack: an old head restored in A's folder (a rollback that would hide A's later records).
    @Test func anOldHeadRestoredIsARollback() throws {
        var d = Fixture.circle(2)
        let (ref, r1) = try d[0].replica.create(Fixture.body("v1", "1"))
        let oldHead = try d[0].replica.head()
        let r2 = try d[0].replica.write(ref: ref, body: Fixture.body("v2", "2"))
        let newHead = try d[0].replica.head()
        #expect(newHead.seq == 2)
        #expect(newHead.chainHash == r2.hash)
        try d[1].replica.observe(head: newHead.bytes)
        #expect(d[1].replica.missing == [d[0].id: 2])
        #expect(throws: SyncError.rollback(d[0].id, seen: 2, got: 1)) {
            try d[1].replica.observe(head: oldHead.bytes)
        }
        try d[1].replica.apply(r1.bytes)
        try d[1].replica.apply(r2.bytes)
        #expect(d[1].replica.missing == [:])
        try d[1].replica.observe(head: newHead.bytes)  // the same head again is fine
    }

    @Test func aHeadNamingAnotherChainIsAFork() throws {
        var d = Fixture.circle(2)
        var twin = Fixture.circle(2)[0]
        let (_, r1) = try d[0].replica.create(Fixture.body("v1", "1"))
        _ = try twin.replica.create(Fixture.body("other", "x"))
        try d[1].replica.apply(r1.bytes)
        #expect(throws: SyncError.forkedHead(d[0].id, seq: 1)) {
            try d[1].replica.observe(head: twin.replica.head().bytes)
        }
        var forged = try d[0].replica.head().bytes
        forged[40] ^= 1  // the sequence number
        #expect(throws: SyncError.forged(d[0].id)) { try d[1].replica.observe(head: forged) }
    }

    /// Attack: a removed device keeps writing; its later records are refused, and it cannot
    /// read what is written under the new epoch.
    @Test func aRemovedDevicesLaterRecordsAreRefusedAndTheEpochRotates() throws {
        var d = Fixture.circle(3)
        let (ref, early) = try d[2].replica.create(Fixture.body("from C", "c1"))
        try d[0].replica.apply(early.bytes)
        try d[0].replica.circle.remove(d[2].id, lastAccepted: 1)
        #expect(try d[0].replica.circle.rotate() == 1)
        #expect(d[0].replica.circle.activeDevices == [d[0].id, d[1].id].sorted())
        let sealed = try d[0].replica.circle.sealedEpochKey()
        #expect(sealed.keys.sorted() == [d[0].id, d[1].id].sorted())
        let key = try SealedKeyBox.open(try #require(sealed[d[1].id]), with: d[1].signer)
        d[1].replica.circle.addEpochKey(key, epoch: 1)
        try d[1].replica.circle.remove(d[2].id, lastAccepted: 1)

        let late = try d[2].replica.write(ref: ref, body: Fixture.body("C again", "c2"))
        #expect(throws: SyncError.removedDevice(d[2].id, seq: 2)) { try d[0].replica.apply(late.bytes) }
        try d[1].replica.apply(early.bytes)  // up to the cut-off still accepted
        #expect(throws: SyncError.removedDevice(d[2].id, seq: 2)) { try d[1].replica.apply(late.bytes) }

        let (secretRef, afterRemoval) = try d[0].replica.create(Fixture.body("new", "after removal"))
        #expect(afterRemoval.header.epoch == 1)
        #expect(try d[1].replica.apply(afterRemoval.bytes) == .applied(secretRef, clockAhead: false))
        #expect(throws: SyncError.unknownEpoch(1)) { try d[2].replica.apply(afterRemoval.bytes) }
        #expect(d[2].replica.liveItems[secretRef] == nil)
    }

    @Test func aClockFarAheadIsAcceptedAndFlagged() throws {
        var d = Fixture.circle(2)
        d[0].clock.set(1_000_000 + 10 * 60 * 1000)
        let (ref, record) = try d[0].replica.create(Fixture.body("x", "y"))
        #expect(try d[1].replica.apply(record.bytes) == .applied(ref, clockAhead: true))
        #expect(d[1].replica.reports == [.clockAhead(d[0].id, seq: 1)])
        #expect(d[1].replica.clock.last == HLCTimestamp(wallMillis: 1_600_000, counter: 1))
    }
}

@Suite struct JournalTests {
    /// A restart: the journal replayed into a fresh replica of the same device gives the same
    /// state, and the device's own log goes on from where it was (no second record 1).
    @Test func replayingTheJournalRebuildsTheReplica() throws {
        var d = Fixture.circle(2)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        _ = try d[1].replica.write(ref: ref, body: Fixture.body("v2", "two"))
        _ = try d[1].replica.create(Fixture.body("other", "x"))
        var restarted = try SyncReplica(
            signer: d[1].signer, circle: d[1].replica.circle, clock: HybridLogicalClock(source: d[1].clock))
        for bytes in d[1].replica.journal {
            guard case .applied = try restarted.apply(bytes) else {
                Issue.record("journal record not applied")
                return
            }
        }
        #expect(restarted.journal.count == 3)
        #expect(restarted.stateDigest == d[1].replica.stateDigest)
        #expect(restarted.appliedSeq(of: d[1].id) == 2)
        let next = try restarted.write(ref: ref, body: Fixture.body("v3", "three"))
        #expect(next.header.seq == 3)
        #expect(try d[1].replica.head().chainHash == next.header.previous)
        #expect(try d[0].replica.apply(next.bytes) == .queued)  // records 1 and 2 of B not seen yet
    }
}

extension JournalTests {
    /// After a restart with the wall clock set back, the device's next record still sorts after its last.
    @Test func aRestartedDeviceNeverWritesBelowItsOwnClock() throws {
        var d = Fixture.circle(1, start: 5_000_000)
        let (ref, first) = try d[0].replica.create(Fixture.body("v1", "one"))
        d[0].clock.set(1_000)
        var restarted = try SyncReplica(
            signer: d[0].signer, circle: d[0].replica.circle, clock: HybridLogicalClock(source: d[0].clock))
        try restarted.apply(first.bytes)
        let second = try restarted.write(ref: ref, body: Fixture.body("v2", "two"))
        #expect(second.header.clock == HLCTimestamp(wallMillis: 5_000_000, counter: 1))
        #expect(restarted.liveItems[ref]?.attributesText == "v2")
    }
}
