import ArcaCrypto

/// What arcad needs beyond the password API: everything keyed by keys it was
/// given already derived, and parking of the keys it holds so that a restart of
/// arcad does not lock anyone out (ARCHITECTURE §5).
extension Vault {
    /// Enrolls a new recovery key (replacing any previous one), proving knowledge of
    /// the password by its derived key. Wrong key → `authFailed`.
    public func enrollRecoveryKey(derivedKey: SecretBytes) throws -> RecoveryKey {
        let master = try unwrapMaster(passwordKey: derivedKey)
        let recovery = try crypto { try RecoveryKey.generate() }
        let wrapped = try crypto { try KeyWrap.wrap(master, with: recovery.key, context: wrapContext("recovery")) }
        try guarded { try putHeader("master.recovery", .blob(wrapped)) }
        return recovery
    }

    /// Opens the master key with the recovery key and wraps it to a new derived key.
    /// Wrong recovery key → `authFailed`, nothing changed.
    public func resetPassword(recoveryKey: RecoveryKey, newDerivedKey: SecretBytes, newParameters: KDFParameters)
        throws
    {
        let master = try unwrapMaster(recoveryKey: recoveryKey)
        try rewrap(master: master, newKey: newDerivedKey, parameters: newParameters)
    }

    /// Checks a recovery key against the vault without changing anything: it must open the
    /// recovery-wrapped master key. Wrong key, or none enrolled → `authFailed`.
    public func verify(recoveryKey: RecoveryKey) throws {
        _ = try unwrapMaster(recoveryKey: recoveryKey)
    }

    /// Checks a derived key against the vault without changing anything.
    public func verify(derivedKey: SecretBytes) throws {
        _ = try unwrapMaster(passwordKey: derivedKey)
    }

    /// The keys this vault holds now (class keys and the index key), serialised into
    /// secure memory: `count:u8, count × (class:u8, key:32), indexKey:32`. Empty
    /// when locked. The master key is never held, so it is never parked.
    public func exportHeldKeys() throws -> SecretBytes? {
        guard let indexKey, !classKeys.isEmpty else { return nil }
        let held = classKeys.sorted { $0.key.rawValue < $1.key.rawValue }
        return try crypto {
            try SecretBytes(count: 1 + held.count * 33 + 32) { out in
                out[0] = UInt8(held.count)
                var offset = 1
                for (accessibility, key) in held {
                    out[offset] = accessibility.rawValue
                    key.withUnsafeBytes {
                        UnsafeMutableRawBufferPointer(rebasing: out[(offset + 1)..<(offset + 33)]).copyMemory(from: $0)
                    }
                    offset += 33
                }
                indexKey.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: out[offset...]).copyMemory(from: $0)
                }
            }
        }
    }

    /// Restores keys exported by `exportHeldKeys`. Malformed input → `param`, nothing loaded.
    @discardableResult
    public func unlock(heldKeys: SecretBytes) throws -> Set<Accessibility> {
        var keys: [Accessibility: SecretBytes] = [:]
        var index: SecretBytes?
        try heldKeys.withUnsafeBytes { raw in
            guard raw.count >= 1 else { throw VaultError.param("parked keys are empty") }
            let count = Int(raw[0])
            guard count >= 1, count <= Accessibility.allCases.count, raw.count == 1 + count * 33 + 32 else {
                throw VaultError.param("parked keys are malformed")
            }
            var offset = 1
            for _ in 0..<count {
                guard let accessibility = Accessibility(rawValue: raw[offset]) else {
                    throw VaultError.param("parked keys name an unknown class")
                }
                keys[accessibility] = try crypto {
                    try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[(offset + 1)..<(offset + 33)]))
                }
                offset += 33
            }
            index = try crypto { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[offset...])) }
        }
        guard let index else { throw VaultError.param("parked keys are malformed") }
        indexKey = index
        blindIndex = BlindIndex(key: index)
        classKeys.merge(keys) { _, new in new }
        return Set(keys.keys)
    }
}
