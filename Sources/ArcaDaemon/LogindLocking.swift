/// What the logind watcher asks of the daemon.
extension Daemon {
    /// Removes `uid`'s whenUnlocked items from the kernel and drops that class
    /// key, as `arca lock` does, logging `reason` when something was locked.
    /// Nothing happens for a user without a vault or already locked.
    public func lockWhenUnlocked(uid: UInt32, reason: String) {
        try? context(uid).withLock { state throws(HandlerError) in
            guard let vault = state.vault else { return }
            let effects = state.lock.lock()
            guard !effects.isEmpty else { return }
            apply(effects, to: state, vault: vault)
            Log.info("uid \(uid): \(reason), whenUnlocked removed")
        }
    }
}
