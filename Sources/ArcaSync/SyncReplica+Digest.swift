/// A digest of everything a replay of the journal rebuilds (issue 17: the journal is compacted,
/// and a compaction is kept only if a replay of it rebuilds the replica that was running).
extension SyncReplica {
    /// Every item's versions (hashes), burial and burial cut; every log's end and hash; every
    /// head's announcement, acknowledgements and time; the snapshot marks; records waiting for
    /// an earlier one, and burials waiting for a record. Not the clock, not the reports.
    public var replayDigest: Digest {
        var w = ByteWriter()
        w.u32(UInt32(clamping: items.count))
        for ref in items.keys.sorted() {
            guard let item = items[ref] else { continue }
            w.raw(ref.bytes)
            w.u8(item.buried ? 1 : 0)
            Self.write(item.burialCut, into: &w)
            w.u32(UInt32(clamping: item.versions.count))
            for hash in item.versions.keys.sorted() { w.raw(hash.bytes) }
        }
        w.u32(UInt32(clamping: logs.count))
        for device in logs.keys.sorted() {
            guard let log = logs[device] else { continue }
            w.raw(device.bytes)
            w.u64(log.seq)
            w.raw(log.last.bytes)
        }
        Self.write(announced, into: &w)
        w.u32(UInt32(clamping: acknowledgements.count))
        for device in acknowledgements.keys.sorted() {
            w.raw(device.bytes)
            Self.write(acknowledgements[device] ?? [:], into: &w)
        }
        Self.write(headWalls, into: &w)
        w.u32(UInt32(clamping: snapshots.count))
        for device in snapshots.keys.sorted() {
            w.raw(device.bytes)
            w.u64(snapshots[device]?.number ?? 0)
            w.raw((snapshots[device]?.hash ?? .zero).bytes)
        }
        w.u32(UInt32(clamping: pending.count))
        for device in pending.keys.sorted() {
            w.raw(device.bytes)
            for (seq, record) in (pending[device] ?? [:]).sorted(by: { $0.key < $1.key }) {
                w.u64(seq)
                w.raw(record.hash.bytes)
            }
        }
        w.u32(UInt32(clamping: pendingBurials.count))
        for device in pendingBurials.keys.sorted() {
            w.raw(device.bytes)
            for (seq, list) in (pendingBurials[device] ?? [:]).sorted(by: { $0.key < $1.key }) {
                w.u64(seq)
                for burial in list {
                    w.raw(burial.hash.bytes)
                    w.raw(burial.snapshotAuthor.bytes)
                    w.u64(burial.number)
                    for (ref, reach) in burial.seqs.sorted(by: { $0.key < $1.key }) {
                        w.raw(ref.bytes)
                        w.u64(reach)
                    }
                }
            }
        }
        return Digest.of(w.bytes)
    }

    private static func write(_ map: [DeviceID: UInt64], into w: inout ByteWriter) {
        w.u32(UInt32(clamping: map.count))
        for (device, value) in map.sorted(by: { $0.key < $1.key }) {
            w.raw(device.bytes)
            w.u64(value)
        }
    }
}
