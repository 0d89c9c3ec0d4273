import ArcaCrypto

/// The key that seals arcad's sync state of this vault's owner (issue 17, layer 3).
extension Vault {
    /// A key derived from the afterFirstUnlock class key, for arcad's sync state at rest
    /// (device signing key, circle epoch keys): the state opens only while the vault's
    /// afterFirstUnlock class is unlocked, so a copied state directory without the login
    /// password reveals no more than a copied vault. Locked → `VaultError.locked`.
    public func syncStateKey() throws -> SecretBytes {
        guard let classKey = classKeys[.afterFirstUnlock] else { throw VaultError.locked }
        return try crypto { try SubkeyDerivation.derive(from: classKey, label: "arca.sync-state.v1") }
    }
}
