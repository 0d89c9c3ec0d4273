import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaVault

#if canImport(Glibc)
import Glibc
#endif

/// Unlock, enrollment, sessions, lock: the lock-state machine carried out on the
/// vault and the kernel.
extension Daemon {
    func status(uid: UInt32, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try self.vault(of: state)
            var unlocked: LockClasses = []
            for c in state.lock.loadedClasses {
                unlocked.insert(c == .whenUnlocked ? .whenUnlocked : .afterFirstUnlock)
            }
            return .status(VaultStatus(
                uid: uid, hasVault: vault != nil, unlocked: unlocked, sessionCount: UInt32(state.sessions.count),
                passwordOutOfSync: state.pending != nil, itemsNotInKernel: UInt32(clamping: state.itemsNotInKernel),
                hasRecoveryKey: vault?.hasRecoveryKey ?? false, lockIncomplete: retryKernelRemoval(state)))
        }
    }

    func kdfParameters(uid: UInt32, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            guard let vault = try self.vault(of: state) else { return .kdfParameters(nil) }
            let p = vault.kdfParameters
            return .kdfParameters(KeyDerivationParameters(
                opsLimit: p.opsLimit, memoryLimit: UInt64(p.memoryLimit), salt: p.salt))
        }
    }

    func unlock(uid: UInt32, key: SecretBytes, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        let context = context(uid)
        let outcome = try context.withLock { state throws(HandlerError) -> UnlockOutcome in
            let vault = try requireVault(of: state)
            return try unlockLocked(state, vault: vault, key: key)
        }
        return try finish(outcome, uid: uid)
    }

    func unlockWithPassword(uid: UInt32, password: SecretBytes, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        let context = context(uid)
        // Argon2id runs outside the user's lock: it takes a quarter of a second.
        let parameters = try context.withLock { state throws(HandlerError) -> KDFParameters in
            try requireVault(of: state).kdfParameters
        }
        try checkCost(parameters)
        // In this uid's turn (one derivation per uid, round-robin across uids);
        // the slot is free again before any failure delay.
        let key = try derivations.run(uid: uid) { () throws(HandlerError) -> SecretBytes in
            do {
                return try Argon2id.deriveKey(password: password, parameters: parameters)
            } catch {
                throw HandlerError(.notAvailable, "cannot derive the key: \(error)")
            }
        }
        let outcome = try context.withLock { state throws(HandlerError) -> UnlockOutcome in
            try unlockLocked(state, vault: try requireVault(of: state), key: key)
        }
        return try finish(outcome, uid: uid)
    }

    func enroll(uid: UInt32, key: SecretBytes, parameters: KDFParameters, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            guard try self.vault(of: state) == nil else { throw HandlerError(.duplicateItem, "a vault already exists") }
            let vault: Vault
            do {
                vault = try Vault.create(
                    at: vaultPath(uid), derivedKey: key, kdfParameters: parameters, hostSecret: hostSecret).vault
            } catch {
                throw HandlerError.vault(error)
            }
            state.vault = vault
            Log.notice("uid \(uid): vault created")
            apply(state.lock.unlock(), to: state, vault: vault)
            return .ok
        }
    }

    /// Sessions are opened and closed by the login stack, which runs as root: a
    /// user's own process could otherwise hold whenUnlocked open with fake sessions.
    func openSession(_ opening: SessionOpening, peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        guard !opening.token.isEmpty else { throw .param("an empty session token") }
        return try context(opening.uid).withLock { state throws(HandlerError) -> Reply in
            let id = SessionID(opening.token)
            if state.sessions[id] == nil {
                state.sessions[id] = SessionRecord(
                    number: nextSessionNumber(), service: opening.service, tty: opening.tty,
                    remoteHost: opening.remoteHost, remoteUser: opening.remoteUser, openedAt: Self.nowMicroseconds(),
                    opener: opener(of: peer), logindSession: ProcessHandle.logindSession(of: peer.pid))
            }
            _ = state.lock.openSession(id)
            Log.info("uid \(opening.uid): session opened (\(opening.service), \(state.sessions.count) open)")
            return .ok
        }
    }

    func closeSession(uid: UInt32, token: [UInt8], peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let id = SessionID(token)
            state.sessions[id] = nil
            let effects = state.lock.closeSession(id)
            if let vault = state.vault { apply(effects, to: state, vault: vault) }
            Log.info("uid \(uid): session closed (\(state.sessions.count) open)")
            try requireKernelRemoved(state)
            return .ok
        }
    }

    func lock(uid: UInt32, classes: LockClasses, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let effects = classes.contains(.afterFirstUnlock) ? state.lock.lockAll() : state.lock.lock()
            if let vault = state.vault { apply(effects, to: state, vault: vault) }
            try requireKernelRemoved(state)
            return .ok
        }
    }

    /// A user locks everything of their own; root locks every user.
    func lockAll(peer: PeerCredentials) throws(HandlerError) -> Reply {
        let targets = peer.isRoot ? allContexts() : [context(peer.uid)]
        var incomplete: HandlerError?
        for target in targets {
            try target.withLock { state throws(HandlerError) in
                let effects = state.lock.lockAll()
                if let vault = state.vault { apply(effects, to: state, vault: vault) }
                do throws(HandlerError) { try requireKernelRemoved(state) } catch { incomplete = error }
            }
        }
        // Every user is locked as far as possible before the failure is reported.
        if let incomplete { throw incomplete }
        return .ok
    }

    func listSessions(peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        var list: [SessionInfo] = []
        for context in allContexts() {
            try context.withLock { state throws(HandlerError) in
                for (id, record) in state.sessions {
                    list.append(SessionInfo(
                        id: record.number, uid: state.uid, service: record.service, tty: record.tty,
                        remoteHost: record.remoteHost, remoteUser: record.remoteUser, openedAt: record.openedAt,
                        locked: state.lock.isScreenLocked(id) ?? false))
                }
            }
        }
        return .sessions(list.sorted { $0.id < $1.id })
    }

    // MARK: Internals

    enum UnlockOutcome {
        case unlocked
        case failed
    }

    /// Unlocks under the user's lock; a right key re-wraps a pending one. A wrong
    /// key is counted by `checkingKey`, and kept as a candidate only by
    /// `loginUnlock`.
    func unlockLocked(_ state: UserState, vault: Vault, key: SecretBytes) throws(HandlerError) -> UnlockOutcome {
        do {
            try vault.unlock(derivedKey: key, hostSecret: hostSecret)
        } catch VaultError.authFailed {
            return .failed
        } catch {
            throw HandlerError.vault(error)
        }
        if let pending = state.pending {
            do {
                try vault.changePassword(
                    oldDerivedKey: key, newDerivedKey: pending.key, newParameters: pending.parameters)
                state.pending = nil
                Log.notice("uid \(state.uid): vault re-wrapped to the new login password")
            } catch {
                Log.error("uid \(state.uid): cannot re-wrap to the new login password: \(error)")
            }
        }
        apply(state.lock.unlock(), to: state, vault: vault)
        // unlock() derived every class key; keep only what the state machine holds.
        lockUnheld(state, vault: vault)
        return .unlocked
    }

    /// Replies to an unlock. A failure is counted, logged and delayed by
    /// `checkingKey`, outside the user's lock.
    func finish(_ outcome: UnlockOutcome, uid: UInt32) throws(HandlerError) -> Reply {
        switch outcome {
        case .unlocked:
            Log.info("uid \(uid): unlocked")
            return .ok
        case .failed:
            throw HandlerError.wrongKey
        }
    }

    /// Carries out lock-state effects on the kernel and the held keys, then parks
    /// what is held.
    func apply(_ effects: [LockEffect], to state: UserState, vault: Vault) {
        guard !effects.isEmpty else { return }
        for effect in effects {
            switch effect {
            case .load(let c):
                state.kernelNotRemoved.remove(c)
                publish(c, state: state, vault: vault)
            case .remove(let c):
                if !kernel.remove(uid: state.uid, class: c) { state.kernelNotRemoved.insert(c) }
                vault.lock(ItemMapping.vaultClasses(c))
                state.notInKernel[c] = nil
            }
        }
        parking.park(uid: state.uid, keys: try? vault.exportHeldKeys())
        events.post(uid: state.uid, [.lockChanged(unlocked: loadedClasses(state))])
    }

    /// Locks the vault classes whose kernel class the state machine does not hold.
    func lockUnheld(_ state: UserState, vault: Vault) {
        for c in KernelClass.allCases where !state.lock.loadedClasses.contains(c) {
            vault.lock(ItemMapping.vaultClasses(c))
        }
    }

    /// Puts every item of kernel class `c` into the user's ring; false if keys of the
    /// ring it replaces could not be destroyed.
    @discardableResult
    func publish(_ c: KernelClass, state: UserState, vault: Vault) -> Bool {
        var items: [KeyringItem] = []
        for accessibility in ItemMapping.vaultClasses(c) {
            for itemClass in ArcaVault.ItemClass.allCases {
                var filter = ItemAttributes()
                filter.accessible = accessibility
                let query = ArcaVault.Query(
                    itemClass, attributes: filter, synchronizable: .any, matchLimit: .all, returnData: true,
                    returnAttributes: true)
                guard let results = try? vault.copyMatching(query) else { continue }
                for result in results {
                    // Secret Service items are found by their attributes, which the kernel
                    // cannot search: arca-secretd reads them over the socket.
                    guard let attributes = result.attributes, let data = result.data,
                        attributes.accessGroup != AttributeItem.accessGroup
                    else { continue }
                    items.append(KeyringItem(key: ItemMapping.keyringKey(attributes, itemClass: itemClass), secret: data))
                }
            }
        }
        let result = kernel.install(uid: state.uid, class: c, items: items)
        state.notInKernel[c] = result.notLoaded
        return !result.oldKeysRemain
    }

    static func nowMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
