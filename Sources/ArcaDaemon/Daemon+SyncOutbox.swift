import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// Outgoing sync records (issue 17). After any request that may have changed a user's
/// synchronizable items (CLI, SecItem, import; arca-secretd's items are never synchronizable)
/// or unlocked them, arcad compares the vault's
/// synchronizable items with the replica's live items and seals a record for every
/// difference: a new item is a creation under a fresh ref, a changed one an edit, a vanished
/// one a tombstone. Comparing states rather than hooking each write path means no path can
/// forget to sync; a non-synchronizable or ThisDeviceOnly item is never looked at.
extension Daemon {
    /// The user whose synchronizable items `request` may have changed or unlocked (then queued
    /// incoming files are applied too). Exhaustive on purpose: a new request
    /// must say whether it touches synced items.
    static func syncFollowUp(of request: Request) -> UInt32? {
        switch request {
        // Only a write that can touch a synchronizable item costs a comparison of the vault.
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
            .importItems(let uid, _, _), .lock(let uid, _), .syncInit(let uid), .syncRecover(let uid, _, _):
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
            .syncStatus, .syncConflicts, .syncResolve:
            // syncJoin: the first records are sealed once the approval arrives.
            return nil
        }
    }

    /// Whether `query` can match synchronizable items (kSecAttrSynchronizable true or Any).
    static func reachesSynchronizable(_ query: ArcaProtocol.Query) -> Bool {
        query.synchronizableAny || query.attributes[.synchronizable] == .bool(true)
    }

    /// Runs after a request that succeeded: applies queued incoming files and seals records
    /// for the user's changed items. Never fails the request; problems go to the log and the
    /// sync reports.
    func syncAfter(_ request: Request, reply: Reply) -> Reply {
        if case .error = reply { return reply }
        if case .lockAll = request {
            // The replicas hold epoch keys: none stays once afterFirstUnlock is locked.
            for context in allContexts() { try? context.withLock { state throws(HandlerError) in syncDrop(state) } }
            return reply
        }
        guard let uid = Self.syncFollowUp(of: request) else { return reply }
        if case .add(let add) = request {
            syncRefresh(uid: uid, added: add)
        } else {
            syncRefresh(uid: uid)
        }
        return reply
    }

    /// Drops the replica if afterFirstUnlock is locked, else drains the queue and seals records.
    /// `added`: an add, after which only the added item's primary key is compared (nothing
    /// else changed), instead of every synchronizable item.
    func syncRefresh(uid: UInt32, added: AddRequest? = nil) {
        do {
            guard try StateDirectory.existingFile(SyncIdentityStore.path(config.stateDirectory, uid: uid)) else {
                return
            }
            try context(uid).withLock { state throws(HandlerError) in
                guard let vault = state.vault else { return }
                guard let key = try? vault.syncStateKey() else { return syncDrop(state) }
                if let added, let session = try syncSession(state, vault: vault, key: key) {
                    if try sealAdded(added, session: session, vault: vault) > 0 {
                        events.post(uid: uid, [.syncChanged])
                    }
                    return try drainSyncQueue(state: state, vault: vault, key: key)
                }
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
        if let session = try syncSession(state, vault: vault, key: key), try sealChanges(session, vault: vault) > 0 {
            events.post(uid: state.uid, [.syncChanged])
        }
        try drainSyncQueue(state: state, vault: vault, key: key)
    }

    /// Seals the item an add made, if it differs from the circle's item with its primary key.
    func sealAdded(_ add: AddRequest, session: SyncSession, vault: Vault) throws(HandlerError) -> Int {
        guard Self.canMerge(vault) else { return 0 }
        let attributes = try ItemMapping.attributes(add.attributes, forWrite: true)
        let found: ItemResult?
        do {
            let probe = PortableItem(
                itemClass: add.itemClass, attributes: attributes, secret: try SecretBytes(count: 0))
            found = try vault.copyMatching(probe.primaryKeyQuery).first
        } catch VaultError.itemNotFound {
            found = nil
        } catch {
            throw HandlerError.vault(error)
        }
        guard let found, let a = found.attributes, let secret = found.data else { return 0 }
        let item = PortableItem(itemClass: add.itemClass, attributes: a, secret: secret)
        guard item.isSynchronizable else { return 0 }
        return try seal([item.primaryKey: item], session: session, deleteMissing: false)
    }

    /// Seals a record for each difference between the vault's synchronizable items and the
    /// replica's live ones; the number sealed. Needs both classes unlocked (else a locked
    /// item would look deleted): otherwise nothing is done until the next unlock.
    @discardableResult
    func sealChanges(_ session: SyncSession, vault: Vault) throws(HandlerError) -> Int {
        guard Self.canMerge(vault) else { return 0 }
        var here: [[UInt8]: PortableItem] = [:]
        do {
            for item in try vault.synchronizableItems() { here[item.primaryKey] = item }
        } catch {
            throw HandlerError.vault(error)
        }
        return try seal(here, session: session, deleteMissing: true)
    }

    /// Seals a record for each item of `here` that differs from the circle's, and with
    /// `deleteMissing` a tombstone for each circle item `here` lacks.
    private func seal(_ here: [[UInt8]: PortableItem], session: SyncSession, deleteMissing: Bool)
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
            for (pk, owner) in owners where deleteMissing && here[pk] == nil {
                _ = try session.replica.delete(owner.ref)
                session.noteOwner(nil, ref: owner.ref)
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
}
