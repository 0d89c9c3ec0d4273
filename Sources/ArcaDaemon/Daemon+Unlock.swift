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
                hasRecoveryKey: vault?.hasRecoveryKey ?? false))
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
            return try unlockLocked(state, vault: vault, key: key, fromLoginStack: peer.isRoot)
        }
        return try finish(outcome, uid: uid, delay: !peer.isRoot)
    }

    func unlockWithPassword(uid: UInt32, password: SecretBytes, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        let context = context(uid)
        // Argon2id runs outside the user's lock: it takes a quarter of a second.
        let parameters = try context.withLock { state throws(HandlerError) -> KDFParameters in
            try requireVault(of: state).kdfParameters
        }
        guard derivations.wrappingAdd(1, ordering: .acquiring).newValue <= Self.maximumDerivations else {
            derivations.wrappingSubtract(1, ordering: .releasing)
            throw HandlerError(.notAvailable, "arcad is busy deriving keys; try again")
        }
        defer { derivations.wrappingSubtract(1, ordering: .releasing) }
        let key: SecretBytes
        do {
            key = try Argon2id.deriveKey(password: password, parameters: parameters)
        } catch {
            throw HandlerError(.notAvailable, "cannot derive the key: \(error)")
        }
        let outcome = try context.withLock { state throws(HandlerError) -> UnlockOutcome in
            try unlockLocked(state, vault: try requireVault(of: state), key: key, fromLoginStack: false)
        }
        return try finish(outcome, uid: uid, delay: !peer.isRoot)
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
                    remoteHost: opening.remoteHost, remoteUser: opening.remoteUser, openedAt: Self.nowMicroseconds())
            }
            _ = state.lock.openSession(id)
            // A session opened after a failed unlock: the PAM stack let that password
            // in. Twice with the same key, in separate sessions, and it is taken as the
            // real login password the vault is out of sync with; the vault is never
            // re-wrapped to a key seen only once.
            if let candidate = state.candidate, peer.isRoot {
                state.candidate = nil
                if candidate.expires > Clock.monotonicSeconds() {
                    if let suspect = state.suspect, suspect.key == candidate.key {
                        state.suspect = nil
                        state.pending = candidate
                        Log.notice("uid \(opening.uid): login password out of sync with the vault; "
                                   + "the next unlock with the old password (or the recovery key) re-wraps it")
                    } else {
                        state.suspect = candidate
                        Log.notice("uid \(opening.uid): a session opened with a password that does not open the vault")
                    }
                }
            }
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
            return .ok
        }
    }

    func lock(uid: UInt32, classes: LockClasses, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let effects = classes.contains(.afterFirstUnlock) ? state.lock.lockAll() : state.lock.lock()
            if let vault = state.vault { apply(effects, to: state, vault: vault) }
            return .ok
        }
    }

    /// A user locks everything of their own; root locks every user.
    func lockAll(peer: PeerCredentials) throws(HandlerError) -> Reply {
        let targets = peer.isRoot ? allContexts() : [context(peer.uid)]
        for target in targets {
            try target.withLock { state throws(HandlerError) in
                let effects = state.lock.lockAll()
                if let vault = state.vault { apply(effects, to: state, vault: vault) }
            }
        }
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
        case failed(consecutive: Int)
    }

    /// Unlocks under the user's lock. A wrong key from the login stack (root) is
    /// kept as a candidate new password; a right key re-wraps a pending one.
    func unlockLocked(_ state: UserState, vault: Vault, key: SecretBytes, fromLoginStack: Bool)
        throws(HandlerError) -> UnlockOutcome
    {
        do {
            try vault.unlock(derivedKey: key, hostSecret: hostSecret)
        } catch VaultError.authFailed {
            state.failures += 1
            if fromLoginStack {
                state.candidate = PendingKey(
                    key: key, parameters: vault.kdfParameters, expires: Clock.monotonicSeconds() + 120)
            }
            return .failed(consecutive: state.failures)
        } catch {
            throw HandlerError.vault(error)
        }
        state.failures = 0
        state.candidate = nil
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

    /// Replies to an unlock; a failure is logged and, for a user's own process,
    /// delayed (growing per uid, at most 2 s), outside the user's lock so that other
    /// requests of the user proceed. The login stack (root) is not delayed: PAM
    /// already judged the password, and a login must never wait on Arca.
    func finish(_ outcome: UnlockOutcome, uid: UInt32, delay: Bool) throws(HandlerError) -> Reply {
        switch outcome {
        case .unlocked:
            Log.info("uid \(uid): unlocked")
            return .ok
        case .failed(let count):
            Log.warning("uid \(uid): failed unlock (\(count) in a row)")
            if delay { usleep(UInt32(Self.failureDelay(consecutive: count) * 1_000_000)) }
            throw HandlerError(.authFailed, "wrong password or key")
        }
    }

    /// 0.25 s, doubling per consecutive failure, at most 2 s.
    static func failureDelay(consecutive count: Int) -> Double {
        min(2.0, 0.25 * Double(1 << min(max(count - 1, 0), 6)))
    }

    /// Carries out lock-state effects on the kernel and the held keys, then parks
    /// what is held.
    func apply(_ effects: [LockEffect], to state: UserState, vault: Vault) {
        guard !effects.isEmpty else { return }
        for effect in effects {
            switch effect {
            case .load(let c):
                publish(c, state: state, vault: vault)
            case .remove(let c):
                kernel.remove(uid: state.uid, class: c)
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

    /// Puts every item of kernel class `c` into the user's ring.
    func publish(_ c: KernelClass, state: UserState, vault: Vault) {
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
        state.notInKernel[c] = kernel.install(uid: state.uid, class: c, items: items)
    }

    static func nowMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
