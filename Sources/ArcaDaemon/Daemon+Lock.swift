import ArcaProtocol

/// The lock state as clients see and change it: status, `arca lock`, `arca lock --all`.
extension Daemon {
    func status(uid: UInt32, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try self.vault(of: state)
            var unlocked: LockClasses = []
            for c in state.lock.loadedClasses {
                unlocked.insert(c == .whenUnlocked ? .whenUnlocked : .afterFirstUnlock)
            }
            return .status(
                VaultStatus(
                    uid: uid, hasVault: vault != nil, unlocked: unlocked, sessionCount: UInt32(state.lock.sessionCount),
                    passwordOutOfSync: state.pending != nil, itemsNotInKernel: UInt32(clamping: state.itemsNotInKernel),
                    hasRecoveryKey: vault?.hasRecoveryKey ?? false, lockIncomplete: retryKernelRemoval(state)))
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
}
