import ArcaCrypto

/// What adopting a snapshot did.
public enum SnapshotOutcome: Sendable, Equatable {
    /// Verified and merged; `resynced` counts the items whose state it changed here (items
    /// buried, versions dropped or turned into siblings): non-zero on a device that was dormant.
    case adopted(resynced: Int)
    /// The same snapshot again: nothing changed.
    case duplicate
}

/// The horizon and snapshots (issue 17): a member dormant past the horizon no longer holds up
/// tombstone collection; the collector publishes a snapshot, and a device coming back resyncs
/// from it, its unseen edits of buried items becoming siblings, never resurrections.
extension SyncReplica {
    /// 30 days.
    public static let defaultHorizonMillis: UInt64 = 30 * 24 * 3600 * 1000

    /// The wall time the last head accepted from `member` carries (nil: none seen yet).
    public func headMillis(of member: DeviceID) -> UInt64? { headWalls[member] }

    /// A signed snapshot of this replica, sealed under the current epoch key: the cut (every
    /// log as applied here), every burial with its cut, and the records of every version held
    /// (left out, the file still valid, when they would not fit in one file: they are also in
    /// their logs). Numbered after this device's previous snapshot.
    public mutating func makeSnapshot() throws -> Snapshot {
        let number = (snapshots[device]?.number ?? 0) + 1
        var contents = SnapshotContents(
            cut: logs.mapValues { CutPoint(seq: $0.seq, hash: $0.last) },
            burials: items.values.filter(\.buried).reduce(into: [:]) { $0[$1.ref] = $1.burialCut },
            records: items.values.flatMap { $0.versions.values }.sorted { $0.hash < $1.hash }.map(\.recordBytes))
        let key = try circle.key(epoch: circle.currentEpoch)
        let snapshot: Snapshot
        do {
            snapshot = try Snapshot.seal(
                contents, number: number, epoch: circle.currentEpoch, epochKey: key, signer: signer)
        } catch SyncError.malformed {
            contents.records = []
            snapshot = try Snapshot.seal(
                contents, number: number, epoch: circle.currentEpoch, epochKey: key, signer: signer)
        }
        snapshots[device] = SnapshotMark(number: number, hash: snapshot.hash)
        return snapshot
    }

    /// Verifies a snapshot like a record (the author's signature, a member, an epoch key held,
    /// no rollback or second snapshot under one number, a cut that names the logs applied
    /// here) and merges it: the versions it holds are added, and each burial applies with its
    /// cut, so an item collected elsewhere does not come back here and this device's versions
    /// after the cut stay as siblings. Refusals throw and change nothing.
    @discardableResult
    public mutating func adopt(snapshot bytes: [UInt8]) throws -> SnapshotOutcome {
        let snapshot = try Snapshot(parsing: bytes)
        let author = snapshot.author
        guard let member = circle.members[author] else { throw SyncError.unknownDevice(author) }
        guard snapshot.signatureIsValid else { throw SyncError.forged(author) }
        if member.removedAfter != nil { throw SyncError.removedDevice(author, seq: snapshot.number) }
        if let last = snapshots[author] {
            if snapshot.number < last.number {
                throw SyncError.rollback(author, seen: last.number, got: snapshot.number)
            }
            if snapshot.number == last.number {
                guard snapshot.hash == last.hash else { throw SyncError.equivocation(author, seq: snapshot.number) }
                return .duplicate
            }
        }
        let contents = try snapshot.open(epochKey: circle.key(epoch: snapshot.epoch))
        for (device, point) in contents.cut {
            if let known = logs[device]?.hashes[point.seq], known != point.hash {
                throw SyncError.forkedHead(device, seq: point.seq)
            }
        }
        let limits = try burialLimits(contents, number: snapshot.number, author: author)
        let versions = try contents.records.map { try verifiedVersion($0, within: contents.cut) }
        var touched: Set<ItemRef> = []
        for version in versions {
            let ref = version.header.ref
            if version.header.author == device {
                clock.catchUp(to: version.header.clock)
            } else {
                clock.receive(version.header.clock)
            }
            if items[ref, default: ItemState(ref: ref)].insert(version) { touched.insert(ref) }
        }
        var resynced = 0
        var later: [DeviceID: [ItemRef: UInt64]] = [:]
        for (ref, cut) in contents.burials.sorted(by: { $0.key < $1.key }) {
            var now: [DeviceID: UInt64] = [:]
            for (device, seq) in cut {
                now[device] = min(seq, limits[device] ?? 0)
                if seq > limits[device] ?? 0 { later[device, default: [:]][ref] = seq }
            }
            let (changed, wasLive) = buryAdopted(ref, covering: now)
            if changed { touched.insert(ref) }
            if changed && (wasLive || items[ref]?.siblings.isEmpty == false) { resynced += 1 }
        }
        // A newer snapshot of the same author replaces its waiting burials (an author's burial
        // cuts only grow): at most one waiting entry per author and cut device, never more.
        for (device, waiting) in pendingBurials {
            let kept = waiting.compactMapValues { list in
                let rest = list.filter { $0.snapshotAuthor != author }
                return rest.isEmpty ? nil : rest
            }
            pendingBurials[device] = kept.isEmpty ? nil : kept
        }
        for (device, seqs) in later {
            guard let point = contents.cut[device] else { continue }
            pendingBurials[device, default: [:]][point.seq, default: []].append(
                PendingBurial(hash: point.hash, snapshotAuthor: author, number: snapshot.number, seqs: seqs))
        }
        changed.formUnion(touched)
        snapshots[author] = SnapshotMark(number: snapshot.number, hash: snapshot.hash)
        if resynced > 0 { reports.append(.resynced(author, items: resynced)) }
        return .adopted(resynced: resynced)
    }

    /// A record carried in a snapshot, verified like one received (a member's, signed, within
    /// the cut, opening under its epoch key) and opened.
    private func verifiedVersion(_ bytes: [UInt8], within cut: [DeviceID: CutPoint]) throws -> ItemVersion {
        let record = try SyncRecord(parsing: bytes)
        let h = record.header
        try circle.admit(author: h.author, seq: h.seq)
        guard record.signatureIsValid else { throw SyncError.forged(h.author) }
        guard h.seq <= cut[h.author]?.seq ?? 0 else {
            throw SyncError.malformed("snapshot carries record \(h.seq) of \(h.author.short), after its cut")
        }
        let body = try record.open(epochKey: circle.key(epoch: h.epoch))
        return ItemVersion(hash: record.hash, header: h, body: body, recordBytes: record.bytes)
    }
}
