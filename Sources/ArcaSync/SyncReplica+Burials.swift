/// A snapshot's burials that reach past the log held here, waiting for the record at the
/// snapshot's cut (`SyncReplica.pendingBurials`).
struct PendingBurial: Sendable, Equatable {
    /// The hash the snapshot's cut names for the record it waits for.
    var hash: Digest
    /// The snapshot's author and number (for the report if the hash does not match).
    var snapshotAuthor: DeviceID
    var number: UInt64
    /// Per buried item, how far into the waiting author's log its burial reaches.
    var seqs: [ItemRef: UInt64]
}

/// How far an adopted snapshot's burials reach (issue 17, review of the horizon work).
///
/// The rule: a burial in a snapshot covers, per author, at most what the snapshot's own cut
/// says its author had applied of that author's log (a burial cut past it is refused), and the
/// cut counts only as far as this device can check it. Where this device holds that author's
/// log up to the cut, the cut's hash must be the record's there (a fork is refused) and the
/// burial applies in full. Where the cut lies past the log here (a device back from past the
/// horizon, whose logs lag the burier's: the case that must keep working), the burial applies
/// up to the log held here at once, and the rest when the record at the cut arrives and has the
/// cut's hash; a record with another hash is reported, and the rest never applies. So a member
/// that signs a snapshot can bury no version beyond records that exist in the author's signed
/// log as the snapshot names it: an edit written after the snapshot (at a sequence number past
/// its cut, or after a made-up cut whose hash no real record has) stays, as a late sibling.
extension SyncReplica {
    /// Per author, how far this snapshot's burials apply at once (the cut where checked here,
    /// else the log held here). Throws if a burial reaches past the snapshot's cut.
    func burialLimits(_ contents: SnapshotContents, number: UInt64, author: DeviceID) throws -> [DeviceID: UInt64] {
        for (ref, cut) in contents.burials {
            for (device, seq) in cut where seq > contents.cut[device]?.seq ?? 0 {
                throw SyncError.malformed(
                    "snapshot \(number) of device \(author.short) buries item \(ref) past its own cut "
                        + "(record \(seq) of device \(device.short))")
            }
        }
        var limits: [DeviceID: UInt64] = [:]
        for (device, point) in contents.cut { limits[device] = min(point.seq, appliedSeq(of: device)) }
        return limits
    }

    /// Buries `ref` up to `cut` (a snapshot's burial, or the part of it that waited), noting a
    /// live version it leaves without a winner. Returns whether the item changed, and whether
    /// it was live here before.
    mutating func buryAdopted(_ ref: ItemRef, covering cut: [DeviceID: UInt64]) -> (changed: Bool, wasLive: Bool) {
        let wasLive = items[ref]?.isLive == true
        let lastLive = items[ref]?.versions.values.filter { !$0.deleted }
            .reduce(nil as ItemVersion?) { best, v in best.map { v.wins(over: $0) ? v : $0 } ?? v }
        guard items[ref, default: ItemState(ref: ref)].bury(covering: cut) else { return (false, false) }
        if let lastLive, items[ref]?.isLive != true { buriedLive[ref] = lastLive }
        return (true, wasLive)
    }

    /// Applies the burials that waited for record `seq` of `author` (just applied, with `hash`).
    mutating func settleBurials(of author: DeviceID, seq: UInt64, hash: Digest) {
        guard let waiting = pendingBurials[author]?.removeValue(forKey: seq) else { return }
        if pendingBurials[author]?.isEmpty == true { pendingBurials[author] = nil }
        for pending in waiting {
            guard pending.hash == hash else {
                reports.append(
                    .refused(
                        .malformed(
                            "snapshot \(pending.number) of device \(pending.snapshotAuthor.short) names record "
                                + "\(seq) of device \(author.short) with another hash: its burials past the log "
                                + "here are not applied")))
                continue
            }
            var resynced = 0
            for (ref, reach) in pending.seqs.sorted(by: { $0.key < $1.key }) {
                let (changed, wasLive) = buryAdopted(ref, covering: [author: reach])
                if changed { self.changed.insert(ref) }
                if wasLive { resynced += 1 }
            }
            if resynced > 0 { reports.append(.resynced(pending.snapshotAuthor, items: resynced)) }
        }
    }
}
