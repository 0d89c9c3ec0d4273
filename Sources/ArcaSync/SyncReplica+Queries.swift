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
    /// acknowledged in its head: no member can still send a record that names them as parent
    /// unseen, so their versions can go.
    public var collectableTombstones: [ItemRef] {
        let others = circle.activeDevices.filter { $0 != device }
        return items.values.filter { item in
            guard let w = item.winner, w.deleted, item.siblings.isEmpty else { return false }
            return item.versions.values.allSatisfy { v in
                others.allSatisfy { m in
                    m == v.header.author || (acknowledgements[m]?[v.header.author] ?? 0) >= v.header.seq
                }
            }
        }.map(\.ref).sorted()
    }

    /// Buries every collectable tombstone; returns their refs.
    @discardableResult
    public mutating func collectTombstones() -> [ItemRef] {
        let refs = collectableTombstones
        for ref in refs { items[ref]?.bury() }
        return refs
    }
}
