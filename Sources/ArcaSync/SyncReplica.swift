import ArcaCrypto

/// What applying one record did.
public enum ApplyOutcome: Sendable, Equatable {
    /// Merged into the item; `clockAhead` when its clock was more than the skew limit ahead.
    case applied(ItemRef, clockAhead: Bool)
    /// Already applied (the same bytes again): nothing changed.
    case duplicate
    /// Waits for an earlier record of the same author.
    case queued
}

/// Something the replica noticed and accepted, or refused while draining its queue.
public enum SyncReport: Sendable, Equatable {
    /// A record whose clock was more than the skew limit ahead of local time.
    case clockAhead(DeviceID, seq: UInt64)
    /// A queued record refused when its turn came.
    case refused(SyncError)
    /// A snapshot of `author` buried items this device still held, or turned versions it had
    /// into siblings of buried items: this device was dormant past the horizon and resynced.
    case resynced(DeviceID, items: Int)
    /// A head whose time was more than the skew limit ahead of local time: accepted, its time
    /// not kept (it does not count for dormancy).
    case headAhead(DeviceID, wallMillis: UInt64)
    /// A head at the sequence number announced before whose time is older than that head's:
    /// an old copy replayed (to make its author look dormant), or its clock stepped back (an
    /// NTP correction). Accepted, its time not kept: a head's time here never goes back.
    case headTimeBack(DeviceID, seen: UInt64, got: UInt64)
}

/// One device's view of the circle's items: verification, per-author logs and the merge.
/// Pure logic: no I/O, the clock injected, so every rule here is unit-tested with exact values.
public struct SyncReplica: Sendable {
    struct AuthorLog: Sendable {
        var seq: UInt64 = 0
        var last: Digest = .zero
        var hashes: [UInt64: Digest] = [:]
    }

    /// This device.
    public let device: DeviceID
    let signer: SigningKey
    /// The circle as this device knows it.
    public var circle: Circle
    /// This device's hybrid logical clock.
    public internal(set) var clock: HybridLogicalClock
    var logs: [DeviceID: AuthorLog] = [:]
    var pending: [DeviceID: [UInt64: SyncRecord]] = [:]
    /// The sequence number each peer's last accepted head announced.
    var announced: [DeviceID: UInt64] = [:]
    var acknowledgements: [DeviceID: [DeviceID: UInt64]] = [:]
    /// Every item this replica holds, buried ones included.
    public internal(set) var items: [ItemRef: ItemState] = [:]
    /// Flags and late refusals, oldest first, for `arca sync status`.
    public internal(set) var reports: [SyncReport] = []
    /// Items whose merged state changed since `takeChanges()`.
    var changed: Set<ItemRef> = []
    /// For each item a snapshot buried while a version of it was live here, that version (the
    /// newest live one): what this device's vault still holds for it, since `takeBuriedLive()`.
    var buriedLive: [ItemRef: ItemVersion] = [:]
    /// Every record applied here, own ones included, in the order applied: replaying it
    /// into a fresh replica of the same device and circle rebuilds this one (a restart).
    public private(set) var journal: [[UInt8]] = []
    /// How long a member may go without a fresher head before it is dormant: tombstone
    /// collection stops waiting for it (`sync_horizon_days`).
    public var horizonMillis: UInt64 = SyncReplica.defaultHorizonMillis
    /// Each peer's last accepted head's clock (wall milliseconds).
    var headWalls: [DeviceID: UInt64] = [:]
    /// The last snapshot adopted (or published) from each author: its number and hash.
    var snapshots: [DeviceID: SnapshotMark] = [:]
    /// Burials of adopted snapshots whose cut, for one author, lies past that author's log
    /// here: by author and the cut's sequence number, applied when the record there arrives
    /// with the cut's hash (`settleBurials`).
    var pendingBurials: [DeviceID: [UInt64: [PendingBurial]]] = [:]

    /// A replica for the device holding `signer`.
    public init(signer: SigningKey, circle: Circle, clock: HybridLogicalClock) throws {
        self.signer = signer
        self.device = try DeviceID(signer.publicKey)
        self.circle = circle
        self.clock = clock
    }

    // MARK: Receiving

    /// Verifies and merges one record file's bytes. Refusals throw and change nothing.
    @discardableResult
    public mutating func apply(_ bytes: [UInt8]) throws -> ApplyOutcome {
        let record = try SyncRecord(parsing: bytes)
        let h = record.header
        try circle.admit(author: h.author, seq: h.seq)
        guard record.signatureIsValid else { throw SyncError.forged(h.author) }
        let log = logs[h.author] ?? AuthorLog()
        if let known = log.hashes[h.seq] {
            guard known == record.hash else { throw SyncError.equivocation(h.author, seq: h.seq) }
            return .duplicate
        }
        if h.seq > log.seq + 1 {
            if let queued = pending[h.author]?[h.seq] {
                guard queued == record else { throw SyncError.equivocation(h.author, seq: h.seq) }
                return .duplicate
            }
            pending[h.author, default: [:]][h.seq] = record
            return .queued
        }
        let ahead = try integrate(record, after: log)
        drainQueue(of: h.author)
        return .applied(h.ref, clockAhead: ahead)
    }

    /// Checks a head: its signature, that it does not go behind what this device applied or
    /// was shown before (a rollback), and that at the applied sequence it names the same chain.
    /// A head's time never goes back here: at the announced sequence number an older time (an
    /// old copy replayed to make its author look dormant, or its clock stepped back) is
    /// reported and not kept, the head otherwise taken (refusing it would stall a device whose
    /// clock was corrected until its clock caught up). A head whose time is more than the skew
    /// limit ahead of this device's clock is accepted but flagged, and its time is not kept
    /// (one device's clock set far ahead would otherwise keep everyone from going dormant).
    /// Returns whether the head's time was kept.
    @discardableResult
    public mutating func observe(head bytes: [UInt8]) throws -> Bool {
        let head = try SignedHead(parsing: bytes)
        guard let member = circle.members[head.author] else { throw SyncError.unknownDevice(head.author) }
        guard head.signatureIsValid else { throw SyncError.forged(head.author) }
        if let cutoff = member.removedAfter, head.seq > cutoff {
            throw SyncError.removedDevice(head.author, seq: head.seq)
        }
        let log = logs[head.author] ?? AuthorLog()
        let seen = max(log.seq, announced[head.author] ?? 0)
        guard head.seq >= seen else { throw SyncError.rollback(head.author, seen: seen, got: head.seq) }
        if head.seq == log.seq, head.chainHash != log.last { throw SyncError.forkedHead(head.author, seq: head.seq) }
        if let known = log.hashes[head.seq], known != head.chainHash {
            throw SyncError.forkedHead(head.author, seq: head.seq)
        }
        let ahead = head.wallMillis > clock.physicalMillis() &+ clock.skewLimitMillis
        announced[head.author] = head.seq
        acknowledgements[head.author] = head.acknowledgements
        if !ahead, let wall = headWalls[head.author], head.wallMillis < wall {
            reports.append(.headTimeBack(head.author, seen: wall, got: head.wallMillis))
            return false
        }
        if ahead {
            reports.append(.headAhead(head.author, wallMillis: head.wallMillis))
            return false
        }
        headWalls[head.author] = head.wallMillis
        return true
    }

    /// How many records of each author a head announced that are not applied yet.
    public var missing: [DeviceID: UInt64] {
        var out: [DeviceID: UInt64] = [:]
        for (device, seq) in announced where seq > appliedSeq(of: device) { out[device] = seq - appliedSeq(of: device) }
        return out
    }

    /// The highest sequence number applied from `author`.
    public func appliedSeq(of author: DeviceID) -> UInt64 { logs[author]?.seq ?? 0 }

    /// Items changed since the last call (what the daemon writes into the vault).
    public mutating func takeChanges() -> Set<ItemRef> {
        defer { changed = [] }
        return changed
    }

    /// Items buried since the last call whose live version the vault may still hold (a resync
    /// removes them there: a buried item has no winner left to say so).
    public mutating func takeBuriedLive() -> [ItemRef: ItemVersion] {
        defer { buriedLive = [:] }
        return buriedLive
    }

    private mutating func integrate(_ record: SyncRecord, after log: AuthorLog) throws -> Bool {
        let h = record.header
        guard h.previous == log.last else { throw SyncError.chainBroken(h.author, seq: h.seq) }
        let body = try record.open(epochKey: circle.key(epoch: h.epoch))
        var ahead = false
        if h.author == device { clock.catchUp(to: h.clock) } else { ahead = clock.receive(h.clock) }
        let hash = record.hash
        items[h.ref, default: ItemState(ref: h.ref)].insert(
            ItemVersion(hash: hash, header: h, body: body, recordBytes: record.bytes))
        var next = log
        next.seq = h.seq
        next.last = hash
        next.hashes[h.seq] = hash
        logs[h.author] = next
        changed.insert(h.ref)
        journal.append(record.bytes)
        settleBurials(of: h.author, seq: h.seq, hash: hash)
        if ahead { reports.append(.clockAhead(h.author, seq: h.seq)) }
        return ahead
    }

    private mutating func drainQueue(of author: DeviceID) {
        while let log = logs[author], let next = pending[author]?.removeValue(forKey: log.seq + 1) {
            do {
                _ = try integrate(next, after: log)
            } catch let error as SyncError {
                reports.append(.refused(error))
            } catch {
                reports.append(.refused(.malformed("\(error)")))
            }
        }
    }

    // MARK: Writing

    /// Writes a record for `ref` (an edit, a creation with a fresh ref, or a tombstone) that
    /// supersedes `parents` (the current winner unless given), applies it here, and returns it.
    public mutating func write(
        ref: ItemRef, body: RecordBody, deleted: Bool = false,
        parents: [Digest]? = nil
    ) throws -> SyncRecord {
        let log = logs[device] ?? AuthorLog()
        let header = RecordHeader(
            ref: ref, clock: clock.now(), author: device, seq: log.seq + 1, previous: log.last, deleted: deleted,
            epoch: circle.currentEpoch, parents: parents ?? items[ref]?.winner.map { [$0.hash] } ?? [])
        let record = try SyncRecord.seal(
            header: header, body: body, epochKey: circle.key(epoch: circle.currentEpoch), signer: signer)
        _ = try integrate(record, after: log)
        return record
    }

    /// A new item under a fresh ref.
    public mutating func create(_ body: RecordBody) throws -> (ItemRef, SyncRecord) {
        let ref = ItemRef.random()
        return (ref, try write(ref: ref, body: body, parents: []))
    }

    /// A tombstone for `ref`.
    public mutating func delete(_ ref: ItemRef) throws -> SyncRecord {
        guard items[ref]?.isLive == true else { throw SyncError.notFound }
        return try write(ref: ref, body: RecordBody(attributes: [], secret: nil), deleted: true)
    }

    /// Resolves a conflict by keeping version `keep`: a record with its content that supersedes every head.
    /// A buried item has no winner left to supersede on every replica (some may not have collected it
    /// yet), so its kept sibling is re-created under a fresh ref, which no old tombstone can kill, and
    /// a tombstone over the late heads clears the sibling; the re-creation is returned.
    public mutating func resolve(_ ref: ItemRef, keeping keep: Digest) throws -> SyncRecord {
        guard let item = items[ref], let kept = item.versions[keep] else { throw SyncError.notFound }
        guard item.buried else {
            return try write(ref: ref, body: kept.body, deleted: kept.deleted, parents: item.heads.map(\.hash))
        }
        let tombstone = try write(
            ref: ref, body: RecordBody(attributes: [], secret: nil), deleted: true, parents: item.heads.map(\.hash))
        guard !kept.deleted else { return tombstone }
        return try create(kept.body).1
    }

    /// This device's signed head: its log's end and what it has applied of everyone else.
    public func head() throws -> SignedHead {
        let own = logs[device] ?? AuthorLog()
        var acks: [DeviceID: UInt64] = [:]
        for (author, log) in logs where author != device { acks[author] = log.seq }
        return try SignedHead.sign(
            seq: own.seq, chainHash: own.last, wallMillis: headWallMillis, acknowledgements: acks,
            signer: signer)
    }
}
