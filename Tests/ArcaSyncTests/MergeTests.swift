import ArcaCrypto
import Testing

@testable import ArcaSync

@Suite struct MergeTests {
    /// A edits while C deletes (C later); B gets both in either order. All converge on the
    /// tombstone with A's edit kept as the one conflict sibling.
    @Test func aDeleteThatWinsKeepsTheLosingEditAsASibling() throws {
        var d = Fixture.circle(3)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        try d[2].replica.apply(created.bytes)
        d[0].clock.set(2_000_000)
        let edit = try d[0].replica.write(ref: ref, body: Fixture.body("v2", "two"))
        d[2].clock.set(3_000_000)
        let delete = try d[2].replica.delete(ref)
        try d[1].replica.apply(delete.bytes)
        try d[1].replica.apply(edit.bytes)
        try d[0].replica.apply(delete.bytes)
        try d[2].replica.apply(edit.bytes)
        for device in d {
            #expect(device.replica.liveItems[ref] == nil)
            let siblings = try #require(device.replica.conflicts[ref])
            #expect(siblings.map(\.hash) == [edit.hash])
            #expect(siblings.first?.attributesText == "v2")
            #expect(Fixture.text(siblings.first?.body.secret) == "two")
            #expect(device.replica.items[ref]?.winner?.hash == delete.hash)
        }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
        #expect(d[1].replica.stateDigest == d[2].replica.stateDigest)
    }

    @Test func anEditThatWinsOverADeleteLeavesNoSibling() throws {
        var d = Fixture.circle(2)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        d[1].clock.set(2_000_000)
        let delete = try d[1].replica.delete(ref)
        d[0].clock.set(3_000_000)
        let edit = try d[0].replica.write(ref: ref, body: Fixture.body("v2", "two"))
        try d[0].replica.apply(delete.bytes)
        try d[1].replica.apply(edit.bytes)
        for device in d {
            #expect(device.replica.liveItems[ref]?.attributesText == "v2")
            #expect(device.replica.conflicts.isEmpty)
        }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
    }

    @Test func concurrentEditsOfEqualClockAreOrderedByDeviceID() throws {
        var d = Fixture.circle(2)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        d[0].clock.set(5_000_000)
        d[1].clock.set(5_000_000)
        let fromA = try d[0].replica.write(ref: ref, body: Fixture.body("A", "a"))
        let fromB = try d[1].replica.write(ref: ref, body: Fixture.body("B", "b"))
        #expect(fromA.header.clock == fromB.header.clock)
        try d[0].replica.apply(fromB.bytes)
        try d[1].replica.apply(fromA.bytes)
        let winner = d[0].id > d[1].id ? "A" : "B"
        let loser = winner == "A" ? "B" : "A"
        for device in d {
            #expect(device.replica.liveItems[ref]?.attributesText == winner)
            #expect(device.replica.conflicts[ref]?.map(\.attributesText) == [loser])
        }
    }

    /// B's wall clock is behind A's, but B had seen A's edit: its own later edit is not a
    /// conflict and wins, because the clock advanced on receive and the parent names A's version.
    @Test func anEditAfterSeeingAnotherIsNotAConflictEvenWithASlowClock() throws {
        var d = Fixture.circle(2)
        d[0].clock.set(9_000_000)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        let edit = try d[1].replica.write(ref: ref, body: Fixture.body("v2", "two"))
        #expect(edit.header.clock == HLCTimestamp(wallMillis: 9_000_000, counter: 2))
        #expect(edit.header.parents == [created.hash])
        try d[0].replica.apply(edit.bytes)
        #expect(d[0].replica.liveItems[ref]?.attributesText == "v2")
        #expect(d[0].replica.conflicts.isEmpty)
    }

    @Test func resolvePicksASiblingEverywhere() throws {
        var d = Fixture.circle(2)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        d[0].clock.set(2_000_000)
        let fromA = try d[0].replica.write(ref: ref, body: Fixture.body("A", "a"))
        d[1].clock.set(3_000_000)
        let fromB = try d[1].replica.write(ref: ref, body: Fixture.body("B", "b"))
        try d[0].replica.apply(fromB.bytes)
        try d[1].replica.apply(fromA.bytes)
        #expect(d[0].replica.conflicts[ref]?.map(\.hash) == [fromA.hash])
        let resolution = try d[0].replica.resolve(ref, keeping: fromA.hash)
        #expect(Set(resolution.header.parents) == [fromA.hash, fromB.hash])
        try d[1].replica.apply(resolution.bytes)
        for device in d {
            #expect(device.replica.conflicts.isEmpty)
            #expect(device.replica.liveItems[ref]?.attributesText == "A")
            #expect(Fixture.text(device.replica.liveItems[ref]?.body.secret) == "a")
        }
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
        #expect(throws: SyncError.notFound) { _ = try d[0].replica.resolve(ref, keeping: .zero) }
    }

    /// A re-created item gets a fresh ref: the old tombstone, seen again, cannot delete it.
    @Test func anOldTombstoneCannotKillARecreatedItem() throws {
        var d = Fixture.circle(2)
        let (first, created) = try d[0].replica.create(Fixture.body("svc", "old"))
        let tombstone = try d[0].replica.delete(first)
        let (second, recreated) = try d[0].replica.create(Fixture.body("svc", "new"))
        #expect(first != second)
        try d[1].replica.apply(created.bytes)
        try d[1].replica.apply(tombstone.bytes)
        try d[1].replica.apply(recreated.bytes)
        #expect(try d[1].replica.apply(tombstone.bytes) == .duplicate)
        #expect(d[1].replica.liveItems.keys.sorted() == [second])
        #expect(Fixture.text(d[1].replica.liveItems[second]?.body.secret) == "new")
        #expect(throws: SyncError.notFound) { _ = try d[1].replica.delete(first) }
    }
}
