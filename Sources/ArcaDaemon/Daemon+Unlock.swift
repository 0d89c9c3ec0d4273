import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaVault

#if canImport(Glibc)
    import Glibc
#endif

/// Unlock and enrollment: a right key makes the user's lock-state machine load
/// both classes.
extension Daemon {
    func kdfParameters(uid: UInt32, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let wasOpen = state.vault != nil
            guard let vault = try self.vault(of: state) else { return .kdfParameters(nil) }
            // The login stack asks only when it found no copy it could believe: write it again
            // (opening the vault just now published it already).
            if peer.isRoot && wasOpen { publishParameters(uid: uid, of: vault) }
            let p = vault.kdfParameters
            return .kdfParameters(
                KeyDerivationParameters(
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
                    at: vaultPath(uid), derivedKey: key, kdfParameters: parameters, hostSecret: hostSecret
                ).vault
            } catch {
                throw HandlerError.vault(error)
            }
            state.vault = vault
            publishParameters(uid: uid, of: vault)
            Log.notice("uid \(uid): vault created")
            apply(state.lock.unlock(), to: state, vault: vault)
            return .ok
        }
    }

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
                publishParameters(uid: state.uid, of: vault)
                Log.notice("uid \(state.uid): vault re-wrapped to the new login password")
            } catch {
                Log.error("uid \(state.uid): cannot re-wrap to the new login password: \(error)")
            }
        }
        // vault.unlock derived every class key, and the machine now holds both classes.
        // Published before the reply, on purpose: when pam_arca's open_session returns,
        // the user's first process can read every loaded item from the kernel
        // (integration 35, "next login: whenUnlocked back"). What a login pays for it
        // is measured by bench/pam's fresh C rows.
        apply(state.lock.unlock(), to: state, vault: vault)
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

}
