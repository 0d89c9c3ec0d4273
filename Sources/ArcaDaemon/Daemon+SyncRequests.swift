import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// The sync requests of the agent and the CLI (issue 17). Each acts on the peer's own uid
/// (root: any), under that user's lock, and needs the afterFirstUnlock class unlocked (the
/// sync state is sealed under its key); a push while either class is locked is queued.
extension Daemon {
    func syncRequest(_ request: Request, peer: PeerCredentials) throws(HandlerError) -> Reply {
        switch request {
        case .syncJoin(let uid, let approver):
            try authorize(peer, for: uid)
            return try syncJoin(uid: uid, approver: try Self.deviceID(approver))
        case .syncApprove(let uid, let device, let sas):
            try authorize(peer, for: uid)
            return try syncApprove(uid: uid, device: try Self.deviceID(device), sas: sas)
        case .syncPull(let uid, let after):
            try authorize(peer, for: uid)
            return try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
                try drainSyncQueue(state: state, vault: vault, key: key)
                guard let session = try syncSession(state, vault: vault, key: key) else {
                    let joining = try syncIdentity(uid: uid, vault: vault)?.signer.publicKey ?? []
                    return .syncOutbox(SyncOutbox(device: joining, records: [], head: [], approvals: [], more: false))
                }
                return .syncOutbox(try session.outbox(after: after))
            }
        case .syncPush(let uid, let files):
            try authorize(peer, for: uid)
            return try syncPush(uid: uid, files: files)
        case .syncRemove(let uid, let device):
            try authorize(peer, for: uid)
            return try syncRemove(uid: uid, device: try Self.deviceID(device))
        case .syncStatus(let uid, let detailed):
            try authorize(peer, for: uid)
            return try syncStatus(uid: uid, detailed: detailed)
        case .syncConflicts(let uid):
            try authorize(peer, for: uid)
            return try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
                .syncConflicts(syncConflicts(try requireSyncSession(state, vault: vault, key: key)))
            }
        case .syncResolve(let uid, let item, let keep):
            try authorize(peer, for: uid)
            return try syncResolve(uid: uid, item: item, keep: keep)
        default:
            throw HandlerError.param("not a sync request")
        }
    }

    private func syncJoin(uid: UInt32, approver: DeviceID) throws(HandlerError) -> Reply {
        try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            if try syncIdentity(uid: uid, vault: vault) != nil {
                throw HandlerError(.duplicateItem, "sync is already set up for this user on this machine")
            }
            let store = SyncStore(stateDirectory: config.stateDirectory, uid: uid)
            try store.removeAll()
            try store.saveJoining(approver: approver)
            let identity = try SyncIdentityStore.create(in: config.stateDirectory, uid: uid, key: key)
            state.sync = nil
            Log.info("uid \(uid): sync identity made, waiting for approval by \(approver.short)")
            return .syncDevice(id: identity.signer.publicKey)
        }
    }

    private func syncApprove(uid: UInt32, device: DeviceID, sas: String?) throws(HandlerError) -> Reply {
        try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            let session = try requireSyncSession(state, vault: vault, key: key)
            guard device != session.device else { throw .param("a device cannot approve itself") }
            let expected = Enrollment.shortAuthenticationString(session.device, device)
            guard let sas else { return .syncApproval(approval: [], shortAuthenticationString: expected) }
            guard sas == expected else {
                throw HandlerError(
                    .authFailed, "the short authentication string does not match: this is not the device shown")
            }
            if session.replica.circle.members[device]?.removedAfter != nil {
                throw .param("device \(device.short) was removed from the circle; it joins again with a new id")
            }
            session.replica.circle.approve(device)
            let entries = try session.refreshCircleUpdates()
            try session.store.saveCircle(session.replica.circle, key: key)
            try session.persist(entries)
            events.post(uid: uid, [.syncChanged])
            Log.info("uid \(uid): sync device \(device.short) approved")
            return .syncApproval(approval: session.approvals[device] ?? [], shortAuthenticationString: expected)
        }
    }

    private func syncRemove(uid: UInt32, device: DeviceID) throws(HandlerError) -> Reply {
        try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            let session = try requireSyncSession(state, vault: vault, key: key)
            guard device != session.device else { throw .param("this device cannot remove itself") }
            guard session.replica.circle.members[device]?.removedAfter == nil,
                session.replica.circle.members[device] != nil
            else { throw HandlerError(.itemNotFound, "device \(device.short) is not a member of the circle") }
            let epoch: UInt32
            do {
                try session.replica.circle.remove(device, lastAccepted: session.replica.appliedSeq(of: device))
                epoch = try session.replica.circle.rotate()
            } catch {
                throw Self.syncError(error)
            }
            session.approvals[device] = nil
            var entries = try session.refreshCircleUpdates()
            if let sealed = try session.sealToRecovery() { entries.append(sealed) }
            try session.store.saveCircle(session.replica.circle, key: key)
            try session.persist(entries)
            events.post(uid: uid, [.syncChanged])
            Log.info("uid \(uid): sync device \(device.short) removed; epoch \(epoch)")
            return .syncRemoval(SyncRemoval(epoch: epoch, seenItems: Self.itemNames(session.replica)))
        }
    }

    private func syncStatus(uid: UInt32, detailed: Bool) throws(HandlerError) -> Reply {
        try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            try drainSyncQueue(state: state, vault: vault, key: key)
            let store = SyncStore(stateDirectory: config.stateDirectory, uid: uid)
            _ = try expireWaiting(store, state: state, now: syncNowMillis())
            let queued = UInt32(clamping: try Self.queuedFileCount(store))
            let counts = try waitingCounts(store)
            guard let session = try syncSession(state, vault: vault, key: key) else {
                guard let identity = try syncIdentity(uid: uid, vault: vault) else { throw Self.syncNotSetUp }
                return .syncStatus(
                    SyncStatus(
                        device: identity.signer.publicKey, awaitingApprovalFrom: try store.loadJoining()?.bytes,
                        epoch: 0, seq: 0, devices: [], queued: queued, conflicts: 0, reports: [],
                        detail: detailed
                            ? SyncStatusDetail(devices: [], expired: counts.expired, waiting: counts.waiting) : nil))
            }
            let replica = session.replica
            let missing = replica.missing
            let devices = replica.circle.members.values.sorted { $0.device < $1.device }.map {
                SyncDeviceStatus(
                    id: $0.device.bytes, removedAfter: $0.removedAfter, applied: replica.appliedSeq(of: $0.device),
                    missing: missing[$0.device] ?? 0)
            }
            let dormant = replica.dormantMembers
            let activity = replica.circle.members.values.sorted { $0.device < $1.device }.map {
                SyncDeviceActivity(
                    headMillis: $0.device == session.device
                        ? replica.headWallMillis : replica.headMillis(of: $0.device) ?? 0,
                    dormant: dormant.contains($0.device))
            }
            return .syncStatus(
                SyncStatus(
                    device: session.device.bytes, awaitingApprovalFrom: nil, epoch: replica.circle.currentEpoch,
                    seq: replica.appliedSeq(of: session.device), devices: devices, queued: queued,
                    conflicts: UInt32(clamping: replica.conflicts.count), reports: session.reports,
                    detail: detailed
                        ? SyncStatusDetail(devices: activity, expired: counts.expired, waiting: counts.waiting) : nil))
        }
    }

    private func syncResolve(uid: UInt32, item: [UInt8], keep: [UInt8]) throws(HandlerError) -> Reply {
        try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            let session = try requireSyncSession(state, vault: vault, key: key)
            do {
                let ref = try ItemRef(item)
                guard session.replica.conflicts[ref] != nil else {
                    throw HandlerError(.itemNotFound, "item \(ref) has no conflict to resolve")
                }
                _ = try session.replica.resolve(ref, keeping: try Digest(keep))
            } catch let error as HandlerError {
                throw error
            } catch {
                throw Self.syncError(error)
            }
            try session.persist()
            try applyWinners(session, state: state, vault: vault)
            events.post(uid: uid, [.syncChanged])
            return .ok
        }
    }

    func syncConflicts(_ session: SyncSession) -> [SyncConflict] {
        session.replica.conflicts.sorted { $0.key < $1.key }.map { ref, siblings in
            // A buried item (its tombstone collected) has no winner: only its late siblings.
            let winner = session.replica.items[ref]?.winner
            return SyncConflict(
                item: ref.bytes,
                versions: ((winner.map { [$0] } ?? []) + siblings).map { v in
                    let item = Self.portable(v)
                    return SyncVersion(
                        hash: v.hash.bytes, author: v.header.author.bytes, clockMillis: v.header.clock.wallMillis,
                        winner: v.hash == winner?.hash, deleted: v.deleted,
                        attributes: item.map {
                            ItemMapping.attributeMap($0.attributes, itemClass: $0.itemClass)
                        } ?? [:])
                })
        }
    }

    /// Every item the replica holds, named by its attributes (for a removal's report).
    static func itemNames(_ replica: SyncReplica) -> [String] {
        Set(
            replica.items.values.flatMap { $0.versions.values }.compactMap { v -> String? in
                guard let a = portable(v)?.attributes else { return nil }
                let name = [a.service ?? a.server, a.account].compactMap { $0 }.joined(separator: "/")
                return a.label.map { "\(name) (\($0))" } ?? name
            }
        ).sorted()
    }

    static let syncNotSetUp = HandlerError(
        .itemNotFound, "sync is not set up for this user on this machine: run 'arca sync init' or 'arca sync join'")

    static func deviceID(_ bytes: [UInt8]) throws(HandlerError) -> DeviceID {
        do { return try DeviceID(bytes) } catch { throw .param("a device id is 32 bytes") }
    }
}
