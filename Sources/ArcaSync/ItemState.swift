/// One version of an item: a verified, opened record.
public struct ItemVersion: Sendable {
    /// The record's hash.
    public let hash: Digest
    /// The record's header.
    public let header: RecordHeader
    /// The opened body.
    public let body: RecordBody
    /// The signed record's bytes (what a snapshot carries; shared with the journal's copy).
    public let recordBytes: [UInt8]

    /// Whether this version is a tombstone.
    public var deleted: Bool { header.deleted }

    /// Last writer wins by (clock, author).
    func wins(over other: ItemVersion) -> Bool {
        (header.clock, header.author) > (other.header.clock, other.header.author)
    }
}

/// Every version of one item that this replica holds, and the merge over them: the versions
/// no other version names as a parent are the heads; the head with the greatest
/// (clock, author) wins, the other heads that are not tombstones are conflict siblings.
/// A buried item (its tombstone was collected) has no winner: whatever arrives later for it
/// is a sibling, never a resurrection. A burial covers the versions up to a cut (per author,
/// the last sequence number the burier had applied): a covered version is dropped, also when it
/// arrives later (a device catching up); a version after the cut, which the burier never saw (a
/// dormant device's offline edit), stays as a sibling. Cuts of several burials combine by
/// maximum, so every device ends with the same versions whatever order it learns them in.
public struct ItemState: Sendable {
    /// The item's reference.
    public let ref: ItemRef
    /// Every version held, by hash.
    public private(set) var versions: [Digest: ItemVersion] = [:]
    private var superseded: Set<Digest> = []
    /// Whether the item's tombstone was collected.
    public private(set) var buried = false
    /// For a buried item: per author, the last sequence number the burial covers.
    public private(set) var burialCut: [DeviceID: UInt64] = [:]

    init(ref: ItemRef) { self.ref = ref }

    /// Whether a burial covers `version` (then it is not kept).
    func covers(_ version: ItemVersion) -> Bool {
        buried && version.header.seq <= burialCut[version.header.author] ?? 0
    }

    /// Adds a version; a version the burial covers is dropped. Returns whether the state changed.
    @discardableResult
    mutating func insert(_ version: ItemVersion) -> Bool {
        guard !covers(version), versions[version.hash] == nil else { return false }
        versions[version.hash] = version
        superseded.formUnion(version.header.parents)
        return true
    }

    /// Buries the item up to `cut` (combined with any earlier burial's cut by maximum): the
    /// covered versions go, the others stay as late siblings. Returns whether the state changed.
    @discardableResult
    mutating func bury(covering cut: [DeviceID: UInt64]) -> Bool {
        let before = (buried, versions.count, burialCut)
        buried = true
        burialCut.merge(cut, uniquingKeysWith: max)
        versions = versions.filter { !covers($0.value) }
        superseded = Set(versions.values.flatMap(\.header.parents))
        return before != (buried, versions.count, burialCut)
    }

    /// The versions nothing supersedes, in hash order.
    public var heads: [ItemVersion] {
        versions.values.filter { !superseded.contains($0.hash) }.sorted { $0.hash < $1.hash }
    }

    /// The winning version (a tombstone if the item is deleted); nil for a buried item.
    public var winner: ItemVersion? {
        guard !buried else { return nil }
        return heads.reduce(nil) { best, v in best.map { v.wins(over: $0) ? v : $0 } ?? v }
    }

    /// The losing heads that are not tombstones, in hash order.
    public var siblings: [ItemVersion] {
        let w = winner?.hash
        return heads.filter { $0.hash != w && !$0.deleted }
    }

    /// Whether the winner is a tombstone with no sibling left: what collection may bury.
    var isLoneTombstone: Bool { winner?.deleted == true && siblings.isEmpty }

    /// Whether the item exists (its winner is not a tombstone).
    public var isLive: Bool { winner.map { !$0.deleted } ?? false }
}
