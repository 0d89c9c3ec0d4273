import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// Sync, layer 3 (issue 17): arcad keeps each user's sync identity in its own state directory
/// (`sync/<uid>.identity`, 0600 root), sealed under a key of the user's vault.
extension Daemon {
    /// `arca sync init`: a new circle of one device (this machine) for `uid`. Needs the
    /// afterFirstUnlock class unlocked (the identity is sealed under its key); refuses a second one.
    func syncInit(uid: UInt32, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            let key: SecretBytes
            do { key = try vault.syncStateKey() } catch { throw HandlerError.vault(error) }
            let identity = try SyncIdentityStore.create(in: config.stateDirectory, uid: uid, key: key)
            Log.info("uid \(uid): sync circle created on this machine")
            return .syncDevice(id: identity.signer.publicKey)
        }
    }

    /// The sync identity of `uid`, or nil if `arca sync init` (or a join) never ran here.
    /// Locked afterFirstUnlock class → `errSecInteractionNotAllowed`.
    func syncIdentity(uid: UInt32, vault: Vault) throws(HandlerError) -> SyncIdentity? {
        let key: SecretBytes
        do { key = try vault.syncStateKey() } catch { throw HandlerError.vault(error) }
        return try SyncIdentityStore.load(from: config.stateDirectory, uid: uid, key: key)
    }
}
