/// What the logind watcher reports, as events of each user's lock-state machine.
extension Daemon {
    /// `uid`'s logind sessions changed: the machine locks whenUnlocked if its
    /// `lock_on` policy now counts the screens as locked, logging `reason`.
    public func logindScreensChanged(uid: UInt32, _ screens: [String: Bool], reason: String) {
        try? context(uid).withLock { state throws(HandlerError) in
            let effects = state.lock.screensChanged(screens)
            guard let vault = state.vault, !effects.isEmpty else { return }
            apply(effects, to: state, vault: vault)
            Log.info("uid \(uid): \(reason), whenUnlocked removed")
        }
    }

    /// The machine is about to suspend: `uid`'s whenUnlocked leaves the kernel.
    public func suspend(uid: UInt32) {
        try? context(uid).withLock { state throws(HandlerError) in
            let effects = state.lock.suspend()
            guard let vault = state.vault, !effects.isEmpty else { return }
            apply(effects, to: state, vault: vault)
            Log.info("uid \(uid): suspend, whenUnlocked removed")
        }
    }
}
