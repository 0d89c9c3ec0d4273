import ArcaCrypto

/// Password change, recovery-key enrollment and recovery. Only the wrapped master
/// key and the KDF parameters change, in one SQLite transaction: a crash at any
/// point leaves either the old or the new password able to open the vault, and no
/// item is re-encrypted.
extension Vault {
    /// Re-wraps the master key from `old` to `new`. The new key uses `kdfParameters`
    /// (at least 64 MiB) or, by default, the current cost with a fresh salt.
    /// Wrong `old` → `authFailed`, nothing changed.
    public func changePassword(old: SecretBytes, new: SecretBytes, kdfParameters newParameters: KDFParameters? = nil)
        throws
    {
        if let given = newParameters, given.memoryLimit < KDFParameters.memoryFloor {
            throw VaultError.param("Argon2id memory must be at least \(KDFParameters.memoryFloor >> 20) MiB")
        }
        try changePassword(old: old, new: new, uncheckedParameters: newParameters ?? freshSalt(kdfParameters))
    }

    /// `changePassword` without the 64 MiB floor, for tests.
    func changePassword(old: SecretBytes, new: SecretBytes, uncheckedParameters params: KDFParameters) throws {
        let oldKey = try crypto { try Argon2id.deriveKey(password: old, parameters: kdfParameters) }
        let newKey = try crypto { try Argon2id.deriveKey(password: new, parameters: params) }
        try changePassword(oldDerivedKey: oldKey, newDerivedKey: newKey, newParameters: params)
    }

    /// Re-wraps the master key with keys already derived (the PAM module derives
    /// both: the old with `kdfParameters`, the new with `newParameters`).
    public func changePassword(oldDerivedKey: SecretBytes, newDerivedKey: SecretBytes, newParameters: KDFParameters)
        throws
    {
        let master = try unwrapMaster(passwordKey: oldDerivedKey)
        try rewrap(master: master, newKey: newDerivedKey, parameters: newParameters)
    }

    /// Recovers a vault whose password is lost: opens the master key with the
    /// recovery key and wraps it to `newPassword`. Wrong recovery key → `authFailed`.
    public func resetPassword(
        recoveryKey: RecoveryKey, newPassword: SecretBytes, kdfParameters newParameters: KDFParameters? = nil
    ) throws {
        if let given = newParameters, given.memoryLimit < KDFParameters.memoryFloor {
            throw VaultError.param("Argon2id memory must be at least \(KDFParameters.memoryFloor >> 20) MiB")
        }
        try resetPassword(
            recoveryKey: recoveryKey, newPassword: newPassword,
            uncheckedParameters: newParameters ?? freshSalt(kdfParameters))
    }

    /// `resetPassword` without the 64 MiB floor, for tests.
    func resetPassword(recoveryKey: RecoveryKey, newPassword: SecretBytes, uncheckedParameters params: KDFParameters)
        throws
    {
        let master = try unwrapMaster(recoveryKey: recoveryKey)
        let newKey = try crypto { try Argon2id.deriveKey(password: newPassword, parameters: params) }
        try rewrap(master: master, newKey: newKey, parameters: params)
    }

    /// Enrolls a new recovery key (replacing any previous one) and returns it: show
    /// it once, it is not stored. Wrong `password` → `authFailed`.
    public func enrollRecoveryKey(password: SecretBytes) throws -> RecoveryKey {
        let key = try crypto { try Argon2id.deriveKey(password: password, parameters: kdfParameters) }
        let master = try unwrapMaster(passwordKey: key)
        let recovery = try crypto { try RecoveryKey.generate() }
        let wrapped = try crypto { try KeyWrap.wrap(master, with: recovery.key, context: wrapContext("recovery")) }
        try guarded { try putHeader("master.recovery", .blob(wrapped)) }
        return recovery
    }

    /// True if a recovery key is enrolled.
    public var hasRecoveryKey: Bool {
        (try? guarded { try header("master.recovery") != nil }) ?? false
    }

    func rewrap(master: SecretBytes, newKey: SecretBytes, parameters: KDFParameters) throws {
        do { try parameters.validate() } catch { throw VaultError.param("invalid KDF parameters: \(error)") }
        let previous = kdfParameters
        do {
            try guarded {
                try db.transaction {
                    try writePasswordWrap(master: master, passwordKey: newKey, parameters: parameters)
                }
            }
        } catch {
            kdfParameters = previous
            throw error
        }
    }

    private func freshSalt(_ p: KDFParameters) -> KDFParameters {
        KDFParameters(
            opsLimit: p.opsLimit, memoryLimit: p.memoryLimit, salt: SecureRandom.bytes(count: KDFParameters.saltLength))
    }
}
