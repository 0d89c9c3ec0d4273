import ArcaKeyring

#if canImport(Glibc)
    import Glibc
#endif

/// Deleted accounts (ARCHITECTURE §6): a user's `@u` outlives the account in the
/// kernel, and a new account that reuses the uid would inherit it. arcad checks
/// the users it knows and clears the kernel side of any that no longer exist.
/// The vault file is kept: an administrator decides about data, arcad never
/// destroys it silently.
extension Daemon {
    /// Whether `uid` has an account: true, false, or nil when the lookup failed
    /// (NSS unreachable), in which case nothing is done. The corresponding C
    /// function is `getpwuid_r`.
    public static func accountExists(_ uid: UInt32) -> Bool? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        if rc != 0 { return nil }
        return result != nil
    }

    /// Locks everything of every known user whose account is gone, removes their
    /// parked keys and clears their kernel keyrings. `exists` is injectable for tests.
    public func purgeDeletedUsers(exists: (UInt32) -> Bool? = Daemon.accountExists) {
        for context in allContexts() {
            try? context.withLock { state throws(HandlerError) in
                guard state.uid != 0, exists(state.uid) == false else { return }
                let effects = state.lock.accountDeleted()
                if let vault = state.vault { apply(effects, to: state, vault: vault) }
                state.forgetNewPassword()
                state.sync = nil  // its epoch keys; the sync files stay, like the vault
                kernel.park(uid: state.uid, keys: nil)
                // Logs what it really did, and what it could not.
                kernel.purge(uid: state.uid)
                state.kernelNotRemoved = []
            }
        }
    }
}
