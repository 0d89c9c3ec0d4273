/// One version of an item: a verified, opened record.
public struct ItemVersion: Sendable {
    /// The record's hash.
    public let hash: Digest
    /// The record's header.
    public let header: RecordHeader
    /// The opened body.
    public let body: RecordBody

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
/// is a sibling, never a resurrection.
public struct ItemState: Sendable {
    /// The item's reference.
    public let ref: ItemRef
    /// Every version held, by hash.
    public private(set) var versions: [Digest: ItemVersion] = [:]
    private var superseded: Set<Digest> = []
    /// Whether the item's tombstone was collected.
    public private(set) var buried = false

    init(ref: ItemRef) { self.ref = ref }

    mutating func insert(_ version: ItemVersion) {
        versions[version.hash] = version
        superseded.formUnion(version.header.parents)
    }

    mutating func bury() {
        versions = [:]
        superseded = []
        buried = true
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
