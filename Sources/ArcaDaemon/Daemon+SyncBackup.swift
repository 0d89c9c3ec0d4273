import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// `arca export` / `arca import`: arcad holds the vault key, so it seals and opens backups;
/// the CLI only moves the bytes (arcad never writes into a user's directory).
extension Daemon {
    /// The shortest passphrase a backup may be sealed to.
    static let minimumBackupPassphraseLength = 12

    func exportItems(uid: UInt32, secret: SecretBytes, passphrase: Bool, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        var bytes = try sealBackup(uid: uid, secret: secret, passphrase: passphrase, peer: peer)
        guard bytes.count <= ProtocolLimits.maximumBackupLength else {
            SecureWipe.zero(&bytes)
            throw .param(
                "the backup would be \(bytes.count) bytes; one request carries at most "
                    + "\(ProtocolLimits.maximumBackupLength): export in chunks (stageExport)")
        }
        return .backup(bytes)
    }

    /// The user's backup, sealed as `secret` says (a recovery key, checked against the vault, or a
    /// passphrase): the one export path of the single-frame and the chunked requests.
    func sealBackup(uid: UInt32, secret: SecretBytes, passphrase: Bool, peer: PeerCredentials)
        throws(HandlerError) -> [UInt8]
    {
        try authorize(peer, for: uid)
        let seal: BackupSeal
        var recovery: RecoveryKey?
        if passphrase {
            guard secret.count >= Self.minimumBackupPassphraseLength else {
                throw .param("a backup passphrase needs at least \(Self.minimumBackupPassphraseLength) characters")
            }
            // Argon2id at the vault floor (64 MiB, 3 passes): the file may be copied anywhere
            // and guessed offline, so never cheaper than a vault.
            let salt = SecureRandom.bytes(count: KDFParameters.saltLength)
            let parameters = KDFParameters(opsLimit: 3, memoryLimit: KDFParameters.memoryFloor, salt: salt)
            seal = .passphrase(secret, parameters)
        } else {
            let key = try Self.parsedRecoveryKey(secret)
            recovery = key
            seal = .recoveryKey(key.key)
        }
        // A passphrase costs an Argon2id derivation: in this uid's turn, like an unlock.
        guard passphrase else { return try export(uid: uid, seal: seal, checking: recovery) }
        return try derivations.run(uid: uid) { () throws(HandlerError) -> [UInt8] in
            try export(uid: uid, seal: seal, checking: nil)
        }
    }

    /// A recovery key that does not open this vault's master key is refused before anything
    /// is sealed: a backup sealed to a mistyped key would never open with the real one.
    static let wrongRecoveryKey = HandlerError(
        .authFailed, "the recovery key does not open this vault; no backup was made")
    /// No recovery key enrolled: nothing to check a typed one against.
    static let noRecoveryKey = HandlerError(
        .param, "this vault has no recovery key; run 'arca recovery --rotate' or export with --passphrase")

    private func export(uid: UInt32, seal: BackupSeal, checking recovery: RecoveryKey?) throws(HandlerError)
        -> [UInt8]
    {
        try context(uid).withLock { state throws(HandlerError) -> [UInt8] in
            let vault = try requireVault(of: state)
            if let recovery {
                guard vault.hasRecoveryKey else { throw Self.noRecoveryKey }
                do { try vault.verify(recoveryKey: recovery) } catch VaultError.authFailed {
                    throw Self.wrongRecoveryKey
                } catch {
                    throw HandlerError.vault(error)
                }
                noteRecoveryKey(recovery, state: state)
            }
            let items: [PortableItem]
            do { items = try vault.portableItems() } catch { throw HandlerError.vault(error) }
            let bytes: [UInt8]
            do {
                bytes = try Backup.write(
                    items.map { RecordBody(attributes: $0.encodedAttributes, secret: $0.secret) }, to: seal,
                    clock: SystemClock())
            } catch {
                throw Self.syncError(error)
            }
            Log.info("uid \(uid): \(items.count) items exported to a backup")
            return bytes
        }
    }

    func importItems(uid: UInt32, backup: [UInt8], secret: SecretBytes, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        let opener: BackupOpener =
            Backup.isSealedToPassphrase(backup)
            ? .passphrase(secret) : .recoveryKey(try Self.recoveryKey(secret))
        let bodies = try derivations.run(uid: uid) { () throws(HandlerError) -> [RecordBody] in
            do { return try Backup.read(backup, with: opener) } catch { throw Self.syncError(error) }
        }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            var counts: [ImportOutcome: UInt32] = [:]
            var changes: [ItemChange] = []
            do {
                let empty = try SecretBytes(count: 0)
                // One transaction: thousands of items cost one sync to disk, not one each, and an
                // import that fails midway (a full vault) leaves the vault as it was.
                try vault.batch {
                    for body in bodies {
                        let item = try PortableItem(encodedAttributes: body.attributes, secret: body.secret ?? empty)
                        let imported = try vault.importItemReporting(item)
                        counts[imported.outcome, default: 0] += 1
                        if let change = imported.change { changes.append(change) }
                    }
                }
            } catch {
                // The transaction rolled back: nothing changed in the vault, so nothing in the kernel.
                throw HandlerError.vault(error)
            }
            let changed = (counts[.added] ?? 0) + (counts[.replaced] ?? 0)
            try reflect(changes, state: state, vault: vault)
            Log.info("uid \(uid): backup imported, \(changed) items added or replaced")
            return .importSummary(
                added: counts[.added] ?? 0, replaced: counts[.replaced] ?? 0, unchanged: counts[.unchanged] ?? 0)
        }
    }

    private static func recoveryKey(_ text: SecretBytes) throws(HandlerError) -> SecretBytes {
        try parsedRecoveryKey(text).key
    }

    private static func parsedRecoveryKey(_ text: SecretBytes) throws(HandlerError) -> RecoveryKey {
        do { return try RecoveryKey(parsing: text) } catch { throw HandlerError.vault(error) }
    }

    /// The one mapping from the sync layer's errors to replies.
    static func syncError(_ error: Error) -> HandlerError {
        guard let error = error as? SyncError else {
            return HandlerError(.internalComponent, "backup: \(error)")
        }
        switch error {
        case .backupUnreadable: return HandlerError(.authFailed, error.description)
        case .malformed, .forged, .equivocation, .chainBroken, .rollback, .forkedHead,
            .undecryptable,
            .unknownDevice, .removedDevice, .unknownEpoch:
            return HandlerError(.decode, error.description)
        case .notFound: return HandlerError(.itemNotFound, error.description)
        }
    }
}
