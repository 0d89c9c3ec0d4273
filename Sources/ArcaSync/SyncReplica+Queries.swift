/// Reading the merged state: live items, conflicts, a digest to compare replicas, and the
/// collection of tombstones every member has acknowledged.
extension SyncReplica {
    /// The live items' winning versions, by ref.
    public var liveItems: [ItemRef: ItemVersion] {
        var out: [ItemRef: ItemVersion] = [:]
        for (ref, item) in items where item.isLive { out[ref] = item.winner }
        return out
    }

    /// Items with conflict siblings, and the siblings (`arca find --conflicts`).
    public var conflicts: [ItemRef: [ItemVersion]] {
        var out: [ItemRef: [ItemVersion]] = [:]
        for (ref, item) in items where !item.siblings.isEmpty { out[ref] = item.siblings }
        return out
    }

    /// A digest of the merged state (each item's winner and siblings): equal on replicas that
    /// converged, whatever order they received the records in.
    public var stateDigest: Digest {
        var w = ByteWriter()
        for ref in items.keys.sorted() {
            guard let item = items[ref] else { continue }
            w.raw(ref.bytes)
            w.u8(item.buried ? 1 : 0)
            w.raw((item.winner?.hash ?? .zero).bytes)
            let siblings = item.siblings.map(\.hash).sorted()
            w.u32(UInt32(siblings.count))
            for s in siblings { w.raw(s.bytes) }
        }
        return Digest.of(w.bytes)
    }

    /// Deleted items without siblings whose every version every other active member has
    /// acknowledged in its head, once every record those heads announced is applied here: an
    /// edit a member wrote before it saw the delete lies below its acknowledging head, and,
    /// applied, makes the item live or a sibling (here as there), so it is never collected
    /// from under it. No member can then still send a record naming the item unseen, except a
    /// dormant one: collection waits for a dormant member's acknowledgement only until the
    /// tombstone itself is older than the horizon (so a member that was merely idle, whose
    /// head is old but who acknowledges within seconds, is waited for), and what the dormant
    /// member wrote unseen arrives after the burial's cut, as a sibling, never a resurrection.
    public var collectableTombstones: [ItemRef] {
        let dormant = dormantMembers
        let now = clock.physicalMillis()
        let others = circle.activeDevices.filter { $0 != device }
        guard others.allSatisfy({ dormant.contains($0) || appliedSeq(of: $0) >= (announced[$0] ?? 0) }) else {
            return []
        }
        return items.values.filter { item in
            guard item.isLoneTombstone, let tombstone = item.winner else { return false }
            let old = now > tombstone.header.clock.wallMillis && now - tombstone.header.clock.wallMillis > horizonMillis
            return item.versions.values.allSatisfy { v in
                others.allSatisfy { m in
                    m == v.header.author || (acknowledgements[m]?[v.header.author] ?? 0) >= v.header.seq
                        || (old && dormant.contains(m))
                }
            }
        }.map(\.ref).sorted()
    }

    /// Buries every collectable tombstone (drops its versions); returns their refs, which the
    /// caller journals after the records applied so far: `bury(_:)` replays them there.
    @discardableResult
    public mutating func collectTombstones() -> [ItemRef] {
        bury(collectableTombstones)
    }

    /// Buries `refs` where a restart's replay of the journal reaches the burial it recorded,
    /// whatever heads are replayed later: the replica is then the one that was saved. A ref
    /// that is not a lone tombstone here is left alone. The burial's cut is every log as
    /// applied here (the same at the replay's point). Returns the refs buried.
    @discardableResult
    public mutating func bury(_ refs: [ItemRef]) -> [ItemRef] {
        let cut = logs.mapValues(\.seq)
        var buried: [ItemRef] = []
        for ref in refs where items[ref]?.isLoneTombstone == true {
            items[ref]?.bury(covering: cut)
            buried.append(ref)
        }
        return buried
    }
}
