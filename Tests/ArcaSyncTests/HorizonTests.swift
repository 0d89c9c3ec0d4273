import ArcaCrypto
import Testing

@testable import ArcaSync

/// The horizon (issue 17): a member without a fresher head than the horizon is dormant and no
/// longer holds up tombstone collection; the collector's snapshot makes the device that comes
/// back drop what was collected, its offline edits becoming siblings, never resurrections.
@Suite struct HorizonTests {
    static let horizon: UInt64 = 10_000
    static let start: UInt64 = 1_000_000

    /// A, B, C with a 10 s horizon. A creates "x"; everyone applies it and sees every head.
    /// Then B goes away; 5 s later C deletes "x" and A applies the delete and C's head.
    private func bAway() throws -> (d: [TestDevice], x: ItemRef, created: SyncRecord, delete: SyncRecord) {
        var d = Fixture.circle(3, start: Self.start)
        for i in 0..<3 { d[i].replica.horizonMillis = Self.horizon }
        let (x, created) = try d[0].replica.create(Fixture.body("x attributes", "x secret"))
        for i in 1...2 { try d[i].replica.apply(created.bytes) }
        let heads = try d.map { try $0.replica.head().bytes }
        for i in 0..<3 { for j in 0..<3 where j != i { try d[i].replica.observe(head: heads[j]) } }
        d[0].clock.set(Self.start + 5_000)
        d[2].clock.set(Self.start + 5_000)
        let delete = try d[2].replica.delete(x)
        try d[0].replica.apply(delete.bytes)
        try d[0].replica.observe(head: d[2].replica.head().bytes)
        return (d, x, created, delete)
    }

    /// A hears from C at `time` (both clocks there): C's head, as an idle but live C publishes it.
    static func hearFromC(_ d: inout [TestDevice], at time: UInt64) throws {
        d[2].clock.set(time)
        d[0].clock.set(time)
        try d[0].replica.observe(head: d[2].replica.head().bytes)
    }

    /// The records `device` wrote, in order.
    static func own(_ device: TestDevice) -> [[UInt8]] {
        device.replica.journal.filter { (try? SyncRecord(parsing: $0))?.header.author == device.id }
    }

    @Test func aMemberWithoutAFresherHeadThanTheHorizonIsDormant() throws {
        var (d, _, _, _) = try bAway()
        #expect(d[0].replica.dormantMembers == [])  // 5 s after B's head
        #expect(try SignedHead(parsing: d[2].replica.head().bytes).wallMillis == Self.start + 5_000)
        // A's own clock alone makes nobody dormant (A may be the one cut off): C's head is from +5 s.
        d[0].clock.set(Self.start + 100_000)
        #expect(d[0].replica.dormantMembers == [])
        // C, idle but live, publishes heads carrying its clock rounded down to 1/8 of the horizon.
        try Self.hearFromC(&d, at: Self.start + 11_249)
        #expect(d[0].replica.headMillis(of: d[2].id) == Self.start + 10_000)
        #expect(d[0].replica.dormantMembers == [])  // exactly the horizon after B's head: not yet
        try Self.hearFromC(&d, at: Self.start + 11_250)
        #expect(d[0].replica.headMillis(of: d[2].id) == Self.start + 11_250)
        #expect(d[0].replica.dormantMembers == [d[1].id])
        #expect(d[0].replica.dormantSince(d[1].id) == Self.start)
        // Judged against C's head, never later than A's own clock.
        d[0].clock.set(Self.start + 10_000)
        #expect(d[0].replica.dormantMembers == [])
        // A member whose head was never seen is not dormant (it may be joining right now).
        var fresh = Fixture.circle(3, start: Self.start)
        fresh[0].clock.set(Self.start + 1_000_000)
        fresh[0].replica.horizonMillis = Self.horizon
        #expect(fresh[0].replica.dormantMembers == [])
    }

    @Test func collectionStopsWaitingForADormantMemberOnceTheTombstoneIsOlderThanTheHorizon() throws {
        var (d, x, _, _) = try bAway()
        #expect(d[0].replica.collectableTombstones == [])  // B has not acknowledged, and is not dormant
        try Self.hearFromC(&d, at: Self.start + 12_000)
        #expect(d[0].replica.dormantMembers == [d[1].id])
        #expect(d[0].replica.collectableTombstones == [])  // the delete is only 7 s old: B may be idle
        d[0].clock.set(Self.start + 15_000)
        #expect(d[0].replica.collectableTombstones == [])
        d[0].clock.set(Self.start + 15_001)
        #expect(d[0].replica.collectableTombstones == [x])
        #expect(d[0].replica.collectTombstones() == [x])
        #expect(d[0].replica.items[x]?.buried == true)
        #expect(d[0].replica.items[x]?.burialCut == [d[0].id: 1, d[2].id: 1])
    }

    /// B, away, edits "x" 30 s after start (after C's delete) and creates "z"; A collects "x"
    /// past B and publishes a snapshot.
    private func bComesBack() throws -> (
        d: [TestDevice], x: ItemRef, z: ItemRef, snapshot: Snapshot, delete: SyncRecord
    ) {
        var (d, x, _, delete) = try bAway()
        try Self.hearFromC(&d, at: Self.start + 15_001)
        #expect(d[0].replica.collectTombstones() == [x])
        let snapshot = try d[0].replica.makeSnapshot()
        d[1].clock.set(Self.start + 30_000)
        _ = try d[1].replica.write(ref: x, body: Fixture.body("x edited offline", "b secret"))
        let (z, _) = try d[1].replica.create(Fixture.body("z made offline", "z secret"))
        return (d, x, z, snapshot, delete)
    }

    @Test func aDeviceBackFromPastTheHorizonResyncsAndConvergesWithoutResurrection() throws {
        var (d, x, z, snapshot, delete) = try bComesBack()
        try d[1].replica.apply(delete.bytes)
        // The plain merge: B's later edit beats the delete. This is the resurrection to prevent.
        #expect(d[1].replica.items[x]?.isLive == true)
        _ = d[1].replica.takeChanges()
        #expect(try d[1].replica.adopt(snapshot: snapshot.bytes) == .adopted(resynced: 1))
        #expect(d[1].replica.takeChanges() == [x])
        #expect(d[1].replica.reports == [.resynced(d[0].id, items: 1)])
        let onB = try #require(d[1].replica.items[x])
        #expect(onB.buried == true)
        #expect(onB.isLive == false)
        #expect(onB.siblings.map(\.attributesText) == ["x edited offline"])
        #expect(onB.versions.count == 1)
        // Z, made offline and never deleted anywhere, is an ordinary new item: it lives.
        #expect(d[1].replica.liveItems[z]?.attributesText == "z made offline")
        // A and C take B's records; C also takes A's snapshot (it had not collected "x" itself).
        #expect(try d[2].replica.adopt(snapshot: snapshot.bytes) == .adopted(resynced: 0))
        for record in Self.own(d[1]) {
            for i in [0, 2] { try d[i].replica.apply(record) }
        }
        for i in [0, 2] {
            #expect(d[i].replica.items[x]?.isLive == false)
            #expect(d[i].replica.conflicts[x]?.map(\.attributesText) == ["x edited offline"])
            #expect(d[i].replica.liveItems[z]?.attributesText == "z made offline")
            #expect(d[i].replica.conflicts.count == 1)
        }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
        #expect(d[2].replica.stateDigest == d[1].replica.stateDigest)
    }

    @Test func aCoveredRecordArrivingAfterTheSnapshotStaysDropped() throws {
        var (d, x, _, snapshot, delete) = try bComesBack()
        // B takes the snapshot first, the delete (which the snapshot covers) after.
        #expect(try d[1].replica.adopt(snapshot: snapshot.bytes) == .adopted(resynced: 1))
        #expect(try d[1].replica.apply(delete.bytes) == .applied(x, clockAhead: false))
        #expect(d[1].replica.items[x]?.versions.count == 1)
        #expect(d[1].replica.conflicts[x]?.map(\.attributesText) == ["x edited offline"])
        for record in Self.own(d[1]) { try d[0].replica.apply(record) }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
    }

    @Test func aSnapshotIsSealedSignedAndRefusedWhenForgedRolledBackOrFromOutside() throws {
        var (d, x, z, snapshot, _) = try bComesBack()
        let bytes = snapshot.bytes
        // Nothing in clear: not the buried ref, not an attribute of a version it carries.
        #expect(!contains(bytes, x.bytes))
        #expect(!contains(bytes, Array("x attributes".utf8)))
        #expect(!contains(bytes, z.bytes))
        let contents = try snapshot.open(epochKey: Fixture.secret(0xEE))
        #expect(contents.burials == [x: [d[0].id: 1, d[2].id: 1]])
        #expect(contents.cut[d[2].id]?.seq == 1)
        #expect(contents.records.count == 0)  // A holds no version but the buried item's
        #expect(throws: SyncError.undecryptable(d[0].id, seq: 1)) { try snapshot.open(epochKey: Fixture.secret(0xEF)) }
        // Every flipped byte is refused and changes nothing.
        let digest = d[1].replica.stateDigest
        for i in bytes.indices {
            var forged = bytes
            forged[i] ^= 0x01
            #expect(throws: (any Error).self) { try d[1].replica.adopt(snapshot: forged) }
        }
        #expect(d[1].replica.stateDigest == digest)
        // A member signing with a key outside the circle.
        var outsider = Fixture.circle(4, start: Self.start)[3]
        outsider.replica.circle = d[0].replica.circle
        let foreign = try outsider.replica.makeSnapshot()
        #expect(throws: SyncError.unknownDevice(outsider.id)) { try d[1].replica.adopt(snapshot: foreign.bytes) }
        // Rollback and a second snapshot under one number.
        var copy = d[0].replica
        let second = try d[0].replica.makeSnapshot()
        let twin = try copy.makeSnapshot()
        #expect(second.number == 2)
        #expect(twin.number == 2)
        #expect(try d[1].replica.adopt(snapshot: second.bytes) == .adopted(resynced: 1))
        #expect(try d[1].replica.adopt(snapshot: second.bytes) == .duplicate)
        #expect(throws: SyncError.rollback(d[0].id, seen: 2, got: 1)) { try d[1].replica.adopt(snapshot: bytes) }
        #expect(throws: SyncError.equivocation(d[0].id, seq: 2)) { try d[1].replica.adopt(snapshot: twin.bytes) }
        // A removed device's snapshot.
        try d[2].replica.circle.remove(d[0].id, lastAccepted: 1)
        #expect(throws: SyncError.removedDevice(d[0].id, seq: 2)) { try d[2].replica.adopt(snapshot: second.bytes) }
    }

    @Test func everyTruncatedSnapshotIsMalformedNeverACrash() throws {
        var (d, _, _, _, _) = try bComesBack()
        let bytes = try d[1].replica.makeSnapshot().bytes
        for n in 0..<bytes.count {
            #expect(throws: (any Error).self) { try Snapshot(parsing: Array(bytes.prefix(n))) }
        }
        #expect(throws: SyncError.malformed("2 trailing bytes after snapshot")) {
            try Snapshot(parsing: bytes + [0, 0])
        }
    }

    @Test func aSnapshotCarriesTheVersionsHeldAndACutThatMustMatchTheLogs() throws {
        var (d, x, z, _, _) = try bComesBack()
        // B's own snapshot holds its live items' records; A, which never saw them, takes them from it.
        let fromB = try d[1].replica.makeSnapshot()
        #expect(try fromB.open(epochKey: Fixture.secret(0xEE)).records.count == 3)
        #expect(try d[0].replica.adopt(snapshot: fromB.bytes) == .adopted(resynced: 0))
        #expect(d[0].replica.liveItems[z]?.attributesText == "z made offline")
        // x stays buried at A (B's own edit is after A's cut; the creation is covered by it).
        #expect(d[0].replica.conflicts[x]?.map(\.attributesText) == ["x edited offline"])
        // A snapshot whose cut names another chain than the one applied here is a fork.
        var forked = Fixture.circle(3, start: Self.start)
        _ = try forked[0].replica.create(Fixture.body("other", "o"))
        let fork = try forked[0].replica.makeSnapshot()
        #expect(throws: SyncError.forkedHead(d[0].id, seq: 1)) { try d[2].replica.adopt(snapshot: fork.bytes) }
    }
}

/// Whether `needle` occurs in `haystack`.
private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
}

/// A device that was itself cut off past the horizon (issue 17, review of the horizon work):
/// to it, the others only look away. It must not collect its own old deletes past them.
@Suite struct IsolatedDeviceTests {
    static let horizon: UInt64 = 10_000
    static let start: UInt64 = 1_000_000

    @Test func aDeviceCutOffPastTheHorizonCollectsNothingAndTheOthersLaterEditWins() throws {
        var d = Fixture.circle(3, start: Self.start)
        for i in 0..<3 { d[i].replica.horizonMillis = Self.horizon }
        let (y, created) = try d[0].replica.create(Fixture.body("y", "y-1"))
        for i in 1...2 { try d[i].replica.apply(created.bytes) }
        let heads = try d.map { try $0.replica.head().bytes }
        for i in 0..<3 { for j in 0..<3 where j != i { try d[i].replica.observe(head: heads[j]) } }
        // B deletes y; then B's network is down for ten horizons: nothing reaches it or leaves it.
        d[1].clock.set(Self.start + 1_000)
        let delete = try d[1].replica.delete(y)
        // Meanwhile A and C live on: A edits y, C applies it, they exchange heads.
        for i in [0, 2] { d[i].clock.set(Self.start + 50_000) }
        let edit = try d[0].replica.write(ref: y, body: Fixture.body("y", "y-2"))
        try d[2].replica.apply(edit.bytes)
        try d[0].replica.observe(head: d[2].replica.head().bytes)
        try d[2].replica.observe(head: d[0].replica.head().bytes)
        // B, 100 s on by its own clock: everyone else's head is old, but so is everything B
        // heard; nobody is dormant to it, and its own old delete is not collected.
        d[1].clock.set(Self.start + 100_000)
        #expect(d[1].replica.dormantMembers == [])
        #expect(d[1].replica.collectableTombstones == [])
        #expect(d[1].replica.collectTombstones() == [])
        // (Judged by B's own clock, as before this rule, A and C were both dormant and y's
        // tombstone, 99 s old, was collected: A's later edit then came to B as a mere sibling,
        // and B's snapshot would have buried y on A and C too.)
        // B comes back: A's later edit beats B's delete everywhere; y is live, one digest.
        try d[1].replica.apply(edit.bytes)
        for i in [0, 2] { try d[i].replica.apply(delete.bytes) }
        for i in 0..<3 {
            #expect(Fixture.text(d[i].replica.liveItems[y]?.body.secret) == "y-2")
            #expect(d[i].replica.items[y]?.buried == false)
        }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
        #expect(d[2].replica.stateDigest == d[1].replica.stateDigest)
        // A, which hears from C, sees B (whose last head is from the start) as dormant.
        try d[0].replica.observe(head: d[2].replica.head().bytes)
        #expect(d[0].replica.dormantMembers == [d[1].id])
    }

    @Test func inACircleOfTwoThisDevicesOwnClockDecides() throws {
        var d = Fixture.circle(2, start: Self.start)
        for i in 0..<2 { d[i].replica.horizonMillis = Self.horizon }
        try d[0].replica.observe(head: d[1].replica.head().bytes)
        d[0].clock.set(Self.start + 10_000)
        #expect(d[0].replica.dormantMembers == [])
        d[0].clock.set(Self.start + 10_001)
        #expect(d[0].replica.dormantMembers == [d[1].id])
    }
}
