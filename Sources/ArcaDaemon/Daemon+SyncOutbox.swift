import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// Outgoing sync records (issue 17). The vault notes the primary-key tag of every
/// synchronizable row an add, update or delete touches (`sync_pending`, in the write's own
/// transaction, whichever path wrote: CLI, SecItem, import, arca-secretd). After any request
/// that may have changed a user's synchronizable items or unlocked them, arcad reads just
/// those rows and seals a record for each that differs from the replica's item: a new item is
/// a creation under a fresh ref, a changed one an edit, a vanished one a tombstone; then the
/// tags are cleared. The work is the rows a request changed, not the vault; a change made
/// while its class was locked, or before a crash, stays pending until it is sealed.
extension Daemon {
    /// The user whose synchronizable items `request` may have changed or unlocked (then queued
    /// incoming files are applied too). Exhaustive on purpose: a new request
    /// must say whether it touches synced items.
    static func syncFollowUp(of request: Request) -> UInt32? {
        switch request {
        // Only a write that can touch a synchronizable item looks at the pending tags.
        case .add(let add):
            guard case .user(let uid) = add.vault, add.attributes[.synchronizable] == .bool(true) else { return nil }
            return uid
        case .update(let update):
            guard case .user(let uid) = update.vault,
                reachesSynchronizable(update.query) || update.attributes[.synchronizable] != nil
            else { return nil }
            return uid
        case .delete(let vault, let query):
            guard case .user(let uid) = vault, reachesSynchronizable(query) else { return nil }
            return uid
        case .unlock(let uid, _), .unlockWithPassword(let uid, _), .loginUnlock(let uid, _), .recover(let uid, _, _, _),
            .loginUnlockDerived(let uid, _, _),
            .importItems(let uid, _, _), .importStaged(let uid, _),
            .lock(let uid, _), .syncInit(let uid), .syncRecover(let uid, _, _):
            return uid
        case .lockAll:
            return nil  // every user: see syncAfter
        case .addAttributeItem, .updateAttributeItem, .deleteAttributeItem:
            // arca-secretd's items are never synchronizable (Vault+AttributeItems).
            return nil
        // openSession never unlocks (UserLockState.openSession has no effects): a login's
        // refresh runs once, after its loginUnlock.
        case .status, .kdfParameters, .enroll, .openSession, .closeSession, .copyMatching, .changePassword,
            .passwordReset, .rotateRecoveryKey, .listSessions, .grant, .revokeGrant, .listGrants,
            .searchAttributeItems, .getAttributeItems, .waitEvents, .searchAttributeReferences, .collectionSettings,
            .confirmCandidate, .exportItems, .syncJoin, .syncApprove, .syncPull, .syncPush, .syncRemove,
            .syncStatus, .syncConflicts, .syncResolve, .stageExport, .readExport, .stageImport:
            // syncJoin: the first records are sealed once the approval arrives.
            return nil
        }
    }

    /// Whether `query` can match synchronizable items (kSecAttrSynchronizable true or Any).
    static func reachesSynchronizable(_ query: ArcaProtocol.Query) -> Bool {
        query.synchronizableAny || query.attributes[.synchronizable] == .bool(true)
    }

    /// Runs after a request that succeeded: seals records for the user's changed items and
    /// applies queued incoming files. Never fails the request; problems go to the log and the
    /// sync reports.
    func syncAfter(_ request: Request, reply: Reply) -> Reply {
        if case .error = reply { return reply }
        if case .lockAll = request {
            // The replicas hold epoch keys: none stays once afterFirstUnlock is locked.
            for context in allContexts() { try? context.withLock { state throws(HandlerError) in syncDrop(state) } }
            return reply
        }
        guard let uid = Self.syncFollowUp(of: request) else { return reply }
        syncRefresh(uid: uid)
        return reply
    }

    /// Drops the replica if afterFirstUnlock is locked, else seals the pending changes and
    /// drains the queue. Without sync set up, the pending tags are reset (nothing reads them).
    func syncRefresh(uid: UInt32) {
        do {
            let setUp = try StateDirectory.existingFile(SyncIdentityStore.path(config.stateDirectory, uid: uid))
            try context(uid).withLock { state throws(HandlerError) in
                guard let vault = state.vault else { return }
                guard setUp else {
                    do { try vault.resetPendingSyncChanges() } catch { throw HandlerError.vault(error) }
                    return
                }
                guard let key = try? vault.syncStateKey() else { return syncDrop(state) }
                try syncCatchUp(state: state, vault: vault, key: key)
            }
        } catch {
            Log.warning("uid \(uid): sync: \(error.message)")
        }
    }

    /// Forgets the user's replica if afterFirstUnlock is locked.
    func syncDrop(_ state: UserState) {
        guard state.sync != nil, (try? state.vault?.syncStateKey()) == nil else { return }
        state.sync = nil
    }

    /// Seals the user's unsealed changes, then applies the files queued while locked: in that
    /// order, so that an edit made while the queue waited becomes a record (and, if concurrent,
    /// a conflict sibling) instead of being overwritten unseen.
    func syncCatchUp(state: UserState, vault: Vault, key: SecretBytes) throws(HandlerError) {
        if let session = try syncSession(state, vault: vault, key: key), try sealPending(session, vault: vault) > 0 {
            events.post(uid: state.uid, [.syncChanged])
        }
        try drainSyncQueue(state: state, vault: vault, key: key)
    }

    /// Seals a record for each pending tag whose row differs from the circle's item (one row
    /// read per tag), then clears those tags; the number sealed. A tag whose row is locked
    /// stays pending. The `compareEverything` tag runs `sealChanges` instead.
    @discardableResult
    func sealPending(_ session: SyncSession, vault: Vault) throws(HandlerError) -> Int {
        var here: [[UInt8]: PortableItem] = [:]
        var vanished: [[UInt8]] = []
        var done: [[UInt8]] = []
        do {
            let pending = try vault.pendingSyncChanges()
            guard !pending.isEmpty else { return 0 }
            if pending.contains(Vault.compareEverything) { return try sealChanges(session, vault: vault) }
            for tag in pending {
                switch try vault.synchronizedRow(tag: tag) {
                case .item(let item):
                    here[item.primaryKey] = item
                    session.primaryKeysByTag[tag] = item.primaryKey
                case .absent: vanished.append(tag)
                case .locked: continue
                }
                done.append(tag)
            }
        } catch {
            throw HandlerError.vault(error)
        }
        let gone = try primaryKeys(ofTags: vanished, session: session, vault: vault)
        let sealed = try seal(here, gone: gone, session: session)
        do { try vault.clearPendingSyncChanges(done) } catch { throw HandlerError.vault(error) }
        return sealed
    }

    /// The circle's primary keys behind the tags of vanished rows. The tag of a key never
    /// changes, so the map is only extended: rebuilt from every owner once when a tag is new.
    private func primaryKeys(ofTags tags: [[UInt8]], session: SyncSession, vault: Vault) throws(HandlerError)
        -> Set<[UInt8]>
    {
        if tags.contains(where: { session.primaryKeysByTag[$0] == nil }) {
            do {
                for (pk, owner) in session.owners() {
                    guard let item = Self.portable(owner.version) else { continue }
                    session.primaryKeysByTag[try vault.primaryKeyTag(of: item)] = pk
                }
            } catch {
                throw HandlerError.vault(error)
            }
        }
        return Set(tags.compactMap { session.primaryKeysByTag[$0] })
    }

    /// Seals a record for each difference between the vault's synchronizable items and the
    /// replica's live ones (every item decrypted: for a new circle, a join, a vault older than
    /// `sync_pending`), then clears every pending tag; the number sealed. Needs both classes
    /// unlocked (else a locked item would look deleted): otherwise nothing is done until the
    /// next unlock.
    @discardableResult
    func sealChanges(_ session: SyncSession, vault: Vault) throws(HandlerError) -> Int {
        guard Self.canMerge(vault) else { return 0 }
        var here: [[UInt8]: PortableItem] = [:]
        do {
            for item in try vault.synchronizableItems() { here[item.primaryKey] = item }
        } catch {
            throw HandlerError.vault(error)
        }
        let gone = Set(session.owners().keys.filter { here[$0] == nil })
        let sealed = try seal(here, gone: gone, session: session)
        do {
            try vault.clearPendingSyncChanges(try vault.pendingSyncChanges())
        } catch {
            throw HandlerError.vault(error)
        }
        return sealed
    }

    /// Seals a record for each item of `here` that differs from the circle's, and a tombstone
    /// for each circle item whose primary key is in `gone`.
    private func seal(_ here: [[UInt8]: PortableItem], gone: Set<[UInt8]>, session: SyncSession)
        throws(HandlerError) -> Int
    {
        let owners = session.owners()
        var sealed = 0
        do {
            for (pk, item) in here.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                let body = RecordBody(attributes: item.encodedAttributes, secret: item.secret)
                if let owner = owners[pk] {
                    let secret = try owner.version.body.secret ?? SecretBytes(count: 0)
                    if owner.version.body.attributes == body.attributes, secret == item.secret {
                        continue
                    }
                    _ = try session.replica.write(ref: owner.ref, body: body)
                    session.noteOwner(pk, ref: owner.ref)
                } else {
                    session.noteOwner(pk, ref: try session.replica.create(body).0)
                }
                sealed += 1
            }
            for pk in gone.sorted(by: { $0.lexicographicallyPrecedes($1) }) where here[pk] == nil {
                guard let owner = owners[pk] else { continue }
                _ = try session.replica.delete(owner.ref)
                session.noteOwner(pk, ref: owner.ref)
                sealed += 1
            }
        } catch {
            throw Self.syncError(error)
        }
        guard sealed > 0 else { return 0 }
        // The vault already holds what these records say.
        _ = session.replica.takeChanges()
        try session.persist()
        return sealed
    }

    /// For each primary key, the live item of the circle that holds it (the greatest (clock,
    /// author) when several do), and the keys that several live items hold.
    static func primaryKeyOwnership(_ replica: SyncReplica)
        -> (owners: [[UInt8]: (ref: ItemRef, version: ItemVersion)], contested: Set<[UInt8]>)
    {
        var owners: [[UInt8]: (ref: ItemRef, version: ItemVersion)] = [:]
        var contested: Set<[UInt8]> = []
        for (ref, version) in replica.liveItems {
            guard let item = portable(version) else { continue }
            let pk = item.primaryKey
            if let held = owners[pk] {
                contested.insert(pk)
                if (held.version.header.clock, held.version.header.author)
                    > (version.header.clock, version.header.author)
                {
                    continue
                }
            }
            owners[pk] = (ref, version)
        }
        return (owners, contested)
    }
}
