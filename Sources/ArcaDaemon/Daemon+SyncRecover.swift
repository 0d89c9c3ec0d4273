import ArcaCrypto
import ArcaProtocol
import ArcaSync
import ArcaVault

/// `arca sync recover`: every device of the circle is lost; on a fresh device with a copy of
/// the synced folder, the vault's printed recovery key opens a recovery seal
/// (`<device>/approvals/<recovery-id>`, see Daemon+SyncRecovery.swift) and this device takes
/// the circle over.
///
/// The recovered circle continues the old one rather than starting afresh: its members and
/// every epoch key are kept, so the old devices' records (up to each one's last signed head in
/// the folder) verify and apply here exactly as on a member. Every old device is then removed
/// at that head and the circle rotates to a new epoch that only this device (and the recovery
/// key) holds: a device that was lost is presumed stolen, so its later records are refused and
/// it cannot read anything written after the recovery. New devices join by `approve` as usual.
extension Daemon {
    func syncRecover(uid: UInt32, files: [SyncFile], secret: SecretBytes, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        let recovery: RecoveryKey
        do { recovery = try RecoveryKey(parsing: secret) } catch { throw HandlerError.vault(error) }
        return try withSync(uid) { state, vault, key throws(HandlerError) -> Reply in
            if try syncIdentity(uid: uid, vault: vault) != nil {
                throw HandlerError(
                    .duplicateItem, "sync is already set up for this user on this machine: recover on a fresh device")
            }
            // Everything is checked before anything is written: a wrong key changes nothing.
            guard let recovered = Self.openRecoverySeals(files, recoveryKey: recovery.key) else {
                throw HandlerError(
                    .authFailed, "the recovery key opens no recovery seal in the synced folder; nothing changed")
            }
            let heads = Self.lastHeads(files, of: recovered)
            let store = SyncStore(stateDirectory: config.stateDirectory, uid: uid)
            // This vault's own recovery identity (noted at a rotation or an export) outlives the
            // clean-up of any earlier, half-made sync state.
            let ownRecovery = try store.loadRecoveryPublicKey()
            try store.removeAll()
            let identity = try SyncIdentityStore.create(in: config.stateDirectory, uid: uid, key: key)
            var circle = recovered
            let epoch: UInt32
            do {
                for old in circle.activeDevices { try circle.remove(old, lastAccepted: heads[old] ?? 0) }
                circle.approve(try identity.device)
                epoch = try circle.rotate()
            } catch {
                throw Self.syncError(error)
            }
            try store.saveCircle(circle, key: key)
            // The next epochs are sealed to the key that just recovered the circle, unless this
            // vault's own recovery key is already known here.
            let sealTo: [UInt8]
            if let ownRecovery {
                sealTo = ownRecovery
            } else {
                do { sealTo = try RecoverySeal.publicKey(recoveryKey: recovery.key) } catch {
                    throw HandlerError(.internalComponent, "cannot keep the recovery identity: \(error)")
                }
            }
            try store.saveRecoveryPublicKey(sealTo)
            state.sync = nil
            _ = try requireSyncSession(state, vault: vault, key: key)
            events.post(uid: uid, [.syncChanged])
            Log.info(
                "uid \(uid): sync circle recovered with the recovery key; "
                    + "\(recovered.activeDevices.count) old device(s) removed; epoch \(epoch)")
            return .syncDevice(id: identity.signer.publicKey)
        }
    }

    /// The circle of every recovery seal among `files` that `recoveryKey` opens, merged (the
    /// most recent epoch, every member and every epoch key); nil when it opens none.
    static func openRecoverySeals(_ files: [SyncFile], recoveryKey: SecretBytes) -> Circle? {
        var opened: [Circle] = []
        for file in files where file.kind == .approval {
            guard let author = try? DeviceID(file.author),
                let circle = try? RecoverySeal.open(file.bytes, from: author, recoveryKey: recoveryKey)
            else { continue }
            opened.append(circle)
        }
        guard var merged = opened.max(by: { $0.currentEpoch < $1.currentEpoch }) else { return nil }
        for circle in opened {
            for (device, member) in circle.members {
                merged.approve(device)
                guard let cutoff = member.removedAfter else { continue }
                let mine = merged.members[device]?.removedAfter
                if mine == nil || cutoff < mine ?? 0 { try? merged.remove(device, lastAccepted: cutoff) }
            }
            for epoch in circle.epochs {
                if let key = try? circle.key(epoch: epoch) { merged.addEpochKey(key, epoch: epoch) }
            }
        }
        return merged
    }

    /// For each active member of `circle`, the highest sequence number among its heads in
    /// `files` whose signature is its own.
    static func lastHeads(_ files: [SyncFile], of circle: Circle) -> [DeviceID: UInt64] {
        var last: [DeviceID: UInt64] = [:]
        let active = Set(circle.activeDevices)
        for file in files where file.kind == .head {
            guard let head = try? SignedHead(parsing: file.bytes), head.author.bytes == file.author,
                active.contains(head.author), head.signatureIsValid
            else { continue }
            last[head.author] = max(last[head.author] ?? 0, head.seq)
        }
        return last
    }
}
