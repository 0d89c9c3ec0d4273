import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// The circle's epoch keys sealed to the vault's recovery key (issue 17: never only to the
/// login password). arcad never keeps the recovery key: when it sees one (a rotation prints
/// it, a verified `arca export` or `arca recover` types it) it keeps the public half of the
/// identity derived from it, `<state>/sync/<uid>.recovery` (32 bytes, 0600 root), and seals
/// every epoch key to that identity (`RecoverySeal`) at each rotation. The seal is published
/// like an approval for the recovery identity (`<device>/approvals/<recovery-id>` in the
/// synced folder); no member pushes it back.
extension SyncStore {
    var recoveryPath: String { "\(directory)/\(uid).recovery" }

    func saveRecoveryPublicKey(_ publicKey: [UInt8]) throws(HandlerError) {
        try Self.writeAtomically(recoveryPath, publicKey, directory: directory)
    }

    /// The recovery identity's public key, or nil when no recovery key was seen since sync began.
    func loadRecoveryPublicKey() throws(HandlerError) -> [UInt8]? {
        guard let bytes = try Self.readPrivate(recoveryPath, limit: 33) else { return nil }
        guard bytes.count == 32 else { throw HandlerError(.decode, "\(recoveryPath) is not a 32-byte public key") }
        return bytes
    }
}

extension SyncSession {
    /// Seals every epoch key to the recovery identity (when one is known) and publishes it;
    /// the journal entry, or nil. `onlyIfMissing`: not when a seal for that identity is held.
    func sealToRecovery(onlyIfMissing: Bool = false) throws(HandlerError) -> SyncEntry? {
        guard let publicKey = try store.loadRecoveryPublicKey() else { return nil }
        let recovery: DeviceID
        do { recovery = try DeviceID(publicKey) } catch { throw HandlerError(.decode, "bad recovery public key") }
        if onlyIfMissing, approvals[recovery] != nil { return nil }
        let sealed: [UInt8]
        do { sealed = try RecoverySeal.seal(replica.circle, to: publicKey, signer: signer) } catch {
            throw HandlerError(.internalComponent, "cannot seal the epoch keys to the recovery key: \(error)")
        }
        // A seal to an earlier recovery key goes: that key was rotated away.
        for device in approvals.keys where replica.circle.members[device] == nil && device != recovery {
            approvals[device] = nil
        }
        approvals[recovery] = sealed
        return .approval(device: publicKey, bytes: sealed)
    }
}

extension Daemon {
    /// Keeps the public recovery identity of `recoveryKey` for `state`'s user and, when the
    /// sync session is loaded, seals the epoch keys to it. Never fails the caller (the
    /// rotation or export it follows succeeded): a failure is logged.
    func noteRecoveryKey(_ recoveryKey: RecoveryKey, state: UserState) {
        let store = SyncStore(stateDirectory: config.stateDirectory, uid: state.uid)
        do {
            let publicKey = try RecoverySeal.publicKey(recoveryKey: recoveryKey.key)
            if try store.loadRecoveryPublicKey() == publicKey { return }
            try store.saveRecoveryPublicKey(publicKey)
            if let session = state.sync, let entry = try session.sealToRecovery() {
                try session.persist([entry])
                events.post(uid: state.uid, [.syncChanged])
            }
        } catch {
            Log.warning("uid \(state.uid): sync: cannot keep the recovery identity: \(error)")
        }
    }
}
