import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// Incoming sync files (issue 17): verified and merged while the vault is unlocked, queued in
/// arcad's state directory while it is locked; merged winners written into the vault and the
/// kernel like any add.
extension Daemon {
    /// Runs `body` under the user's lock with the vault and its sync state key.
    /// afterFirstUnlock locked → `errSecInteractionNotAllowed`.
    func withSync(_ uid: UInt32, _ body: (UserState, Vault, SecretBytes) throws(HandlerError) -> Reply)
        throws(HandlerError) -> Reply
    {
        try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            let key: SecretBytes
            do { key = try vault.syncStateKey() } catch {
                state.sync = nil
                throw HandlerError.vault(error)
            }
            return try body(state, vault, key)
        }
    }

    /// The user's sync session, loaded (and the journal replayed) on first use; nil when sync
    /// is not set up here or a join still waits for its approval.
    func syncSession(_ state: UserState, vault: Vault, key: SecretBytes) throws(HandlerError) -> SyncSession? {
        if let session = state.sync { return session }
        guard let identity = try syncIdentity(uid: state.uid, vault: vault) else { return nil }
        let store = SyncStore(stateDirectory: config.stateDirectory, uid: state.uid)
        let saved = try store.loadCircle(key: key)
        if saved == nil, try store.loadJoining() != nil { return nil }
        let circle: Circle
        if let saved {
            circle = saved
        } else {
            do { circle = Circle(devices: [try identity.device], epoch: identity.epoch, key: identity.epochKey) } catch
            {
                throw Self.syncError(error)
            }
        }
        let session = try SyncSession(
            store: store, signer: identity.signer, circle: circle,
            clockOffsetMilliseconds: config.syncClockOffsetMilliseconds, horizonDays: config.syncHorizonDays)
        try session.replay()
        // Time alone makes a member dormant: what became collectable while arcad was down goes now.
        try Self.collectTombstones(session)
        // A circle begun before the recovery key was seen, or by `sync init`: sealed once.
        if let sealed = try session.sealToRecovery(onlyIfMissing: true) { try session.persist([sealed]) }
        state.sync = session
        return session
    }

    func requireSyncSession(_ state: UserState, vault: Vault, key: SecretBytes) throws(HandlerError) -> SyncSession {
        if let session = try syncSession(state, vault: vault, key: key) { return session }
        guard try syncIdentity(uid: state.uid, vault: vault) != nil else { throw Self.syncNotSetUp }
        throw HandlerError(.interactionNotAllowed, "this device waits for its approval ('arca sync join')")
    }

    /// Whether merged winners can be written: both synced classes unlocked.
    static func canMerge(_ vault: Vault) -> Bool {
        vault.unlockedClasses.isSuperset(of: [.whenUnlocked, .afterFirstUnlock])
    }

    func syncPush(uid: UInt32, files: [SyncFile]) throws(HandlerError) -> Reply {
        try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            let store = SyncStore(stateDirectory: config.stateDirectory, uid: uid)
            guard Self.canMerge(vault), let key = try? vault.syncStateKey() else {
                guard try StateDirectory.existingFile(SyncIdentityStore.path(config.stateDirectory, uid: uid)) else {
                    throw Self.syncNotSetUp
                }
                return .syncPushResult(
                    try enqueue(files, waiting: false, message: "the vault is locked", state: state, store: store))
            }
            try syncCatchUp(state: state, vault: vault, key: key)
            let outcomes = try applySyncFiles(files, state: state, vault: vault, key: key)
            // A circle update may name the author or epoch of files that wait in the queue.
            if zip(files, outcomes).contains(where: { $0.kind == .approval && $1.code == .applied }) {
                try drainSyncQueue(state: state, vault: vault, key: key, retryWaiting: true)
            }
            return .syncPushResult(outcomes)
        }
    }

    /// Applies the files queued while the vault was locked, in the order they came, and with
    /// `retryWaiting` (a circle update applied) those that waited for a circle update.
    func drainSyncQueue(state: UserState, vault: Vault, key: SecretBytes, retryWaiting: Bool = false)
        throws(HandlerError)
    {
        guard Self.canMerge(vault) else { return }
        let store = SyncStore(stateDirectory: config.stateDirectory, uid: state.uid)
        // Loaded first, so that what the queue reports (drops, expiries) reaches its reports.
        _ = try syncSession(state, vault: vault, key: key)
        // Taken out first: a file that must wait again (a join not yet approved) is queued anew.
        let (files, since) = try takeQueue(store, state: state, retryWaiting: retryWaiting)
        guard !files.isEmpty else { return }
        let outcomes = try applySyncFiles(files, state: state, vault: vault, key: key, fromQueue: true, since: since)
        Log.info("uid \(state.uid): sync: \(outcomes.filter { $0.code == .applied }.count) queued files applied")
        // A circle update among them (queued while locked) may name the author or epoch of files
        // that wait for one: retried now, since the agent will not offer them again.
        if !retryWaiting, zip(files, outcomes).contains(where: { $0.kind == .approval && $1.code == .applied }) {
            try drainSyncQueue(state: state, vault: vault, key: key, retryWaiting: true)
        }
    }

    /// Verifies and merges `files` in order; one outcome each. Refusals change nothing and
    /// are kept in the reports. `fromQueue`: the files were already kept in the queue, so those
    /// that must wait for a circle update are not deferred beyond the bound of waiting files (no
    /// agent would offer them again): the oldest beyond it are dropped, counted as expired, and
    /// each keeps the time it was first queued (`since`).
    func applySyncFiles(
        _ files: [SyncFile], state: UserState, vault: Vault, key: SecretBytes, fromQueue: Bool = false,
        since: [[UInt8]: UInt64] = [:]
    ) throws(HandlerError) -> [SyncFileOutcome] {
        let store = SyncStore(stateDirectory: config.stateDirectory, uid: state.uid)
        // A batch that throws before its records are journaled: the next persist journals them.
        defer { state.sync?.discardTaken() }
        var outcomes: [SyncFileOutcome] = []
        var extra: [SyncEntry] = []
        var waiting: [Int] = []
        var circleChanged = false
        for file in files {
            guard let session = try syncSession(state, vault: vault, key: key) else {
                let outcome = try joinOrQueue(file, state: state, vault: vault, key: key, store: store)
                outcomes.append(outcome)
                // Joined: this machine's own synchronizable items become records before anything
                // from the circle is written over them.
                if outcome.code == .applied, let joined = try syncSession(state, vault: vault, key: key) {
                    try sealChanges(joined, vault: vault)
                }
                continue
            }
            let outcome = Self.applyOne(file, session: session, journal: &extra)
            extra += session.takeApplied()  // journaled in the order applied
            if outcome.code == .refused {
                session.note("\(file.kind) from \(Self.short(file.author)): \(outcome.message)")
            }
            if file.kind == .approval, outcome.code == .applied {
                try store.saveCircle(session.replica.circle, key: key)
                circleChanged = true
            }
            if Self.waitsForCircle(outcome) { waiting.append(outcomes.count) }
            outcomes.append(outcome)
        }
        if let session = state.sync {
            // Files that waited for a circle update that came later in this same push.
            if circleChanged {
                for index in waiting {
                    outcomes[index] = Self.applyOne(files[index], session: session, journal: &extra)
                    extra += session.takeApplied()
                }
            }
            // A file the queue's bounds turn away is deferred (or refused): the agent offers it again later.
            let again = waiting.filter { Self.waitsForCircle(outcomes[$0]) }
            let kept = try enqueue(
                again.map { files[$0] }, waiting: true, message: "", state: state, store: store,
                boundWaiting: !fromQueue, since: since)
            for (index, outcome) in zip(again, kept) where outcome.code != .queued { outcomes[index] = outcome }
            try session.persist(extra)
            let vaultChanged = try applyWinners(session, state: state, vault: vault)
            // After the winners are written (a delete in this batch is in the vault) and after
            // this batch's records and heads in the journal: the journal's order is the replay's.
            if outcomes.contains(where: { $0.code == .applied }) { try Self.collectTombstones(session) }
            if vaultChanged { events.post(uid: state.uid, [.itemsChanged]) }
            // New records or a circle update change this device's head (its acknowledgements) or
            // approvals; a peer's head alone changes nothing here, so the agent is not woken for it.
            let moved = zip(files, outcomes).contains { $0.kind != .head && $1.code == .applied }
            if moved { events.post(uid: state.uid, [.syncChanged]) }
        }
        return outcomes
    }

    /// Before the circle exists (a join waits): the approver's approval completes the join;
    /// anything else waits in the queue.
    private func joinOrQueue(_ file: SyncFile, state: UserState, vault: Vault, key: SecretBytes, store: SyncStore)
        throws(HandlerError) -> SyncFileOutcome
    {
        guard let approver = try store.loadJoining(), let identity = try syncIdentity(uid: state.uid, vault: vault)
        else { throw Self.syncNotSetUp }
        guard file.kind == .approval, file.author == approver.bytes else {
            let outcomes = try enqueue(
                [file], waiting: false, message: "this device waits for its approval", state: state, store: store)
            return outcomes.first ?? SyncFileOutcome(code: .refused, message: "not kept")
        }
        let circle: Circle
        do { circle = try Enrollment.accept(file.bytes, from: approver, as: identity.signer) } catch {
            Log.warning("uid \(state.uid): sync: approval refused: \(error)")
            return SyncFileOutcome(code: .refused, message: "\(error)")
        }
        try store.saveCircle(circle, key: key)
        try store.removeJoining()
        Log.info("uid \(state.uid): sync: approved by \(approver.short); joined the circle")
        return SyncFileOutcome(code: .applied)
    }

    /// The start of the message of a file kept until the circle names its author or epoch.
    static let circleWait = "kept until a circle update names it: "

    static func waitsForCircle(_ outcome: SyncFileOutcome) -> Bool {
        outcome.code == .queued && outcome.message.hasPrefix(circleWait)
    }

    private static func applyOne(_ file: SyncFile, session: SyncSession, journal: inout [SyncEntry])
        -> SyncFileOutcome
    {
        do {
            let author = try DeviceID(file.author)
            switch file.kind {
            case .record:
                let record = try SyncRecord(parsing: file.bytes)
                guard record.header.author == author else {
                    return SyncFileOutcome(
                        code: .refused, message: "a record in \(author.short)'s folder names another author")
                }
                switch try session.replica.apply(file.bytes) {
                case .applied: return SyncFileOutcome(code: .applied)
                case .duplicate: return SyncFileOutcome(code: .duplicate)
                case .queued:
                    // Journaled now: a restart replays it into the replica's wait queue again, so
                    // it still applies when the earlier record comes (a repeat later is a duplicate).
                    journal.append(.record(file.bytes))
                    return SyncFileOutcome(code: .queued, message: "waits for an earlier record")
                }
            case .head:
                let head = try SignedHead(parsing: file.bytes)
                guard head.author == author else {
                    return SyncFileOutcome(
                        code: .refused, message: "a head in \(author.short)'s folder names another author")
                }
                guard author != session.device else { return SyncFileOutcome(code: .duplicate) }
                if session.lastHeads[author] == file.bytes { return SyncFileOutcome(code: .duplicate) }
                try session.replica.observe(head: file.bytes)
                session.lastHeads[author] = file.bytes
                journal.append(.head(file.bytes))
                return SyncFileOutcome(code: .applied)
            case .snapshot:
                return try Self.applySnapshot(file.bytes, author: author, session: session, journal: &journal)
            case .approval:
                guard session.replica.circle.activeDevices.contains(author), author != session.device else {
                    return SyncFileOutcome(code: .refused, message: "approval from \(author.short), not a member")
                }
                if session.lastApprovals[author] == file.bytes { return SyncFileOutcome(code: .duplicate) }
                session.merge(try Enrollment.accept(file.bytes, from: author, as: session.signer))
                session.lastApprovals[author] = file.bytes
                return SyncFileOutcome(code: .applied)
            }
        } catch let error as SyncError {
            switch error {
            case .unknownDevice, .unknownEpoch:
                // A new member's files, or records under a new epoch key, can arrive before the
                // circle update that introduces them: kept in the queue and tried again.
                return SyncFileOutcome(code: .queued, message: circleWait + error.description)
            default:
                return SyncFileOutcome(code: .refused, message: error.description)
            }
        } catch {
            return SyncFileOutcome(code: .refused, message: "\(error)")
        }
    }

    /// Writes into the vault what the merge changed: a live winner replaces the item with its
    /// primary key; a winning tombstone deletes it. When two items of the circle share a
    /// primary key, the one with the greatest (clock, author) is the vault's, everywhere.
    /// Returns whether the vault changed (then exactly the changed items' keys are put or
    /// dropped in the loaded rings).
    @discardableResult
    func applyWinners(_ session: SyncSession, state: UserState, vault: Vault) throws(HandlerError) -> Bool {
        let changed = session.replica.takeChanges()
        let buriedLive = session.replica.takeBuriedLive()
        guard !changed.isEmpty else { return false }
        session.invalidateOwners()
        let owners = session.owners()
        // In the vault's order, so that the kernel ends as the vault does.
        var wrote: [ItemChange] = []
        // One transaction (one fsync) for the whole batch: 10,000 incoming items are one write.
        do {
            try vault.batch {
                for ref in changed.sorted() {
                    guard let item = session.replica.items[ref] else { continue }
                    do {
                        if let winner = item.winner, !winner.deleted {
                            guard let portable = Self.portable(winner) else {
                                session.note("item \(ref) carries an item that may not be synced: not written")
                                continue
                            }
                            guard owners[portable.primaryKey]?.ref == ref else { continue }
                            wrote.append(try vault.putSynced(portable))
                        } else if let any = item.versions.values.first(where: { !$0.deleted }),
                            let portable = Self.portable(any),
                            owners[portable.primaryKey] == nil
                        {
                            wrote += try vault.removeSynced(portable)
                        } else if item.winner == nil, let last = buriedLive[ref], let portable = Self.portable(last),
                            owners[portable.primaryKey] == nil
                        {
                            // Buried by a snapshot with nothing live left (this device, back from
                            // past the horizon, never saw the delete): the copy here goes too.
                            wrote += try vault.removeSynced(portable)
                        }
                    } catch {
                        session.note(
                            "item \(ref) could not be written into the vault: \(HandlerError.vault(error).message)")
                    }
                }
            }
        } catch {
            throw HandlerError.vault(error)
        }
        guard !wrote.isEmpty else { return false }
        try reflect(wrote, state: state, vault: vault)
        return true
    }

    /// For each primary key, the live item of the circle that holds it.
    static func primaryKeyOwners(_ replica: SyncReplica) -> [[UInt8]: (ref: ItemRef, version: ItemVersion)] {
        primaryKeyOwnership(replica).owners
    }

    /// A version's item, if it is one that may be synced.
    static func portable(_ version: ItemVersion) -> PortableItem? {
        guard !version.deleted, let empty = try? SecretBytes(count: 0),
            let item = try? PortableItem(
                encodedAttributes: version.body.attributes, secret: version.body.secret ?? empty),
            item.isSynchronizable
        else { return nil }
        return item
    }

    static func short(_ id: [UInt8]) -> String { (try? DeviceID(id))?.short ?? "?" }
}
