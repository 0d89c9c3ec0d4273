import ArcaCrypto
import Testing

@testable import ArcaSync

/// Tombstone collection (issue 17): a deleted item's versions go once every active member
/// acknowledged them; a burial is journaled where it happened, so a restart rebuilds the same
/// replica; whatever arrives for a buried item later is a sibling, never a resurrection.
@Suite struct TombstoneTests {
    /// A, B, C; A creates then deletes; each device sees the others' heads and collects.
    private func deletedEverywhere() throws -> ([TestDevice], ItemRef, [SyncRecord]) {
        var d = Fixture.circle(3)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        let delete = try d[0].replica.delete(ref)
        for i in 1...2 {
            try d[i].replica.apply(created.bytes)
            try d[i].replica.apply(delete.bytes)
        }
        return (d, ref, [created, delete])
    }

    /// A creates; C edits it (unseen by A and B); A deletes it; B applies the delete.
    private func editBeforeDelete() throws -> ([TestDevice], ItemRef, edit: SyncRecord, delete: SyncRecord) {
        var d = Fixture.circle(3)
        let (ref, created) = try d[0].replica.create(Fixture.body("v1", "one"))
        try d[1].replica.apply(created.bytes)
        try d[2].replica.apply(created.bytes)
        let edit = try d[2].replica.write(ref: ref, body: Fixture.body("C offline", "c"))
        let delete = try d[0].replica.delete(ref)
        try d[1].replica.apply(delete.bytes)
        return (d, ref, edit, delete)
    }

    @Test func aTombstoneEveryMemberAcknowledgedIsCollectedEverywhere() throws {
        let (devices, ref, records) = try deletedEverywhere()
        var d = devices
        #expect(d[0].replica.collectableTombstones == [])  // no head from B or C yet
        try d[0].replica.observe(head: d[1].replica.head().bytes)
        #expect(d[0].replica.collectableTombstones == [])  // C has not acknowledged
        let heads = try d.map { try $0.replica.head().bytes }
        for i in 0..<3 {
            for j in 0..<3 where j != i && !(i == 0 && j == 1) { try d[i].replica.observe(head: heads[j]) }
        }
        let digestBefore = d[0].replica.stateDigest
        for i in 0..<3 {
            #expect(d[i].replica.collectTombstones() == [ref])
            #expect(d[i].replica.items[ref]?.buried == true)
            #expect(d[i].replica.items[ref]?.versions.count == 0)
            #expect(d[i].replica.items[ref]?.winner == nil)
            #expect(d[i].replica.collectableTombstones == [])
        }
        #expect(d[0].replica.stateDigest != digestBefore)
        #expect(d[1].replica.stateDigest == d[0].replica.stateDigest)
        #expect(d[2].replica.stateDigest == d[0].replica.stateDigest)
        // The records stay known by hash: a repeat is a duplicate and the item stays buried.
        #expect(try d[1].replica.apply(records[1].bytes) == .duplicate)
        #expect(try d[1].replica.apply(records[0].bytes) == .duplicate)
        #expect(d[1].replica.items[ref]?.versions.count == 0)
        #expect(d[1].replica.journal.count == 2)
    }

    /// C edited the item before it saw the delete, and its head (which acknowledges the delete)
    /// announces that edit: until the edit is applied here nothing is collected. Before the fix
    /// B buried the item at once and the edit then came as a sibling, while on C it won: the
    /// replicas never converged.
    @Test func nothingIsCollectedWhileAnAcknowledgingHeadAnnouncesRecordsNotAppliedHere() throws {
        let (devices, ref, edit, delete) = try editBeforeDelete()
        var d = devices
        try d[2].replica.apply(delete.bytes)
        try d[1].replica.observe(head: d[0].replica.head().bytes)
        let headC = try d[2].replica.head()
        #expect(headC.seq == 1)
        #expect(headC.acknowledgements[d[0].id] == 2)
        try d[1].replica.observe(head: headC.bytes)
        #expect(d[1].replica.missing == [d[2].id: 1])
        #expect(d[1].replica.collectableTombstones == [])
        #expect(d[1].replica.collectTombstones() == [])
        #expect(try d[1].replica.apply(edit.bytes) == .applied(ref, clockAhead: false))
        // The edit's clock is after the delete's: it wins on B as on C.
        #expect(d[1].replica.liveItems[ref]?.attributesText == "C offline")
        #expect(d[2].replica.liveItems[ref]?.attributesText == "C offline")
        #expect(d[1].replica.collectableTombstones == [])
        #expect(d[1].replica.stateDigest == d[2].replica.stateDigest)
    }

    /// C (removed, never acknowledging) wrote an edit before A's delete; it arrives after A and
    /// B buried the item: a sibling, not a resurrection, though its clock is after the delete's.
    @Test func aLateEditFromADeviceThatNeverAcknowledgedIsASibling() throws {
        let (devices, ref, edit, delete) = try editBeforeDelete()
        var d = devices
        for i in 0...1 { try d[i].replica.circle.remove(d[2].id, lastAccepted: 1) }
        #expect(edit.header.clock > delete.header.clock)
        try d[1].replica.observe(head: d[0].replica.head().bytes)
        #expect(d[1].replica.collectTombstones() == [ref])
        let burialPosition = d[1].replica.journal.count
        #expect(burialPosition == 2)
        #expect(try d[1].replica.apply(edit.bytes) == .applied(ref, clockAhead: false))
        #expect(d[1].replica.liveItems[ref] == nil)
        #expect(d[1].replica.items[ref]?.isLive == false)
        #expect(d[1].replica.conflicts[ref]?.map(\.attributesText) == ["C offline"])
        #expect(d[1].replica.collectableTombstones == [])

        // A restart: the journal's records replayed with the burial where it was journaled
        // rebuild B exactly; replayed without it, the edit would win (a resurrection).
        let journal = d[1].replica.journal
        #expect(journal.count == 3)
        var restarted = try SyncReplica(
            signer: d[1].signer, circle: d[1].replica.circle, clock: HybridLogicalClock(source: d[1].clock))
        for bytes in journal[..<burialPosition] { try restarted.apply(bytes) }
        #expect(restarted.bury([ref]) == [ref])
        for bytes in journal[burialPosition...] { try restarted.apply(bytes) }
        #expect(restarted.stateDigest == d[1].replica.stateDigest)
        #expect(restarted.liveItems[ref] == nil)
        #expect(restarted.conflicts[ref]?.map(\.attributesText) == ["C offline"])

        var unburied = try SyncReplica(
            signer: d[1].signer, circle: d[1].replica.circle, clock: HybridLogicalClock(source: d[1].clock))
        for bytes in journal { try unburied.apply(bytes) }
        #expect(unburied.liveItems[ref]?.attributesText == "C offline")
        #expect(unburied.bury([ref]) == [])  // not a lone tombstone: left alone
        #expect(unburied.stateDigest != d[1].replica.stateDigest)
    }

    /// Resolving a buried item's late sibling re-creates it under a fresh ref and clears the
    /// sibling with a tombstone: every replica, collected or not, converges on one live item.
    @Test func resolvingALateSiblingRecreatesItUnderAFreshRef() throws {
        let (devices, ref, edit, _) = try editBeforeDelete()
        var d = devices
        for i in 0...1 { try d[i].replica.circle.remove(d[2].id, lastAccepted: 1) }
        try d[1].replica.observe(head: d[0].replica.head().bytes)
        try d[0].replica.observe(head: d[1].replica.head().bytes)
        #expect(d[1].replica.collectTombstones() == [ref])
        #expect(d[0].replica.collectTombstones() == [ref])
        try d[1].replica.apply(edit.bytes)
        #expect(d[1].replica.conflicts[ref]?.map(\.hash) == [edit.hash])

        let recreated = try d[1].replica.resolve(ref, keeping: edit.hash)
        let fresh = recreated.header.ref
        #expect(fresh != ref)
        #expect(recreated.header.parents == [])
        #expect(recreated.header.seq == 2)  // after the tombstone over the late head
        #expect(d[1].replica.liveItems[fresh]?.attributesText == "C offline")
        #expect(Fixture.text(d[1].replica.liveItems[fresh]?.body.secret) == "c")
        #expect(d[1].replica.liveItems[ref] == nil)
        #expect(d[1].replica.conflicts.isEmpty)

        // A gets the late edit, then B's tombstone and re-creation.
        try d[0].replica.apply(edit.bytes)
        #expect(d[0].replica.conflicts[ref]?.map(\.hash) == [edit.hash])
        for bytes in d[1].replica.journal.suffix(2) { try d[0].replica.apply(bytes) }
        #expect(d[0].replica.conflicts.isEmpty)
        #expect(d[0].replica.liveItems.keys.sorted() == [fresh])
        #expect(d[0].replica.stateDigest == d[1].replica.stateDigest)
    }
}
