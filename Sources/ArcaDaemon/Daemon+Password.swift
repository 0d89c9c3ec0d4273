import ArcaCrypto
import ArcaProtocol
import ArcaVault

/// Password change, administrator reset (out of sync), recovery.
extension Daemon {
    func changePassword(
        uid: UInt32, oldKey: SecretBytes, newKey: SecretBytes, parameters: KDFParameters, peer: PeerCredentials
    ) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                try vault.changePassword(oldDerivedKey: oldKey, newDerivedKey: newKey, newParameters: parameters)
            } catch {
                throw HandlerError.vault(error)
            }
            state.forgetNewPassword()
            publishParameters(uid: uid, of: vault)
            Log.notice("uid \(uid): vault password changed")
            return .ok
        }
    }

    /// An administrator set a new login password without the old one (`passwd user`
    /// as root). The vault cannot be re-wrapped without the old password, so the new
    /// key waits; the next unlock with the old password or recovery re-wraps.
    func passwordReset(uid: UInt32, newKey: SecretBytes, parameters: KDFParameters, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            guard let vault = try self.vault(of: state) else { return .ok }
            if (try? vault.verify(derivedKey: newKey)) != nil {
                state.pending = nil  // the vault already opens with it
                return .ok
            }
            state.pending = PendingKey(key: newKey, parameters: parameters, expires: .infinity)
            Log.notice(
                "uid \(uid): login password reset by an administrator; vault out of sync until the next "
                    + "unlock with the old password or the recovery key")
            return .ok
        }
    }

    func recover(
        uid: UInt32, recoveryText: SecretBytes, newKey: SecretBytes, parameters: KDFParameters, peer: PeerCredentials
    ) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        let recoveryKey: RecoveryKey
        do {
            recoveryKey = try RecoveryKey(parsing: recoveryText)
        } catch {
            throw HandlerError.vault(error)
        }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                try vault.resetPassword(recoveryKey: recoveryKey, newDerivedKey: newKey, newParameters: parameters)
            } catch {
                throw HandlerError.vault(error)
            }
            state.forgetNewPassword()
            publishParameters(uid: uid, of: vault)
            Log.notice("uid \(uid): vault recovered with the recovery key and wrapped to a new password")
            switch try unlockLocked(state, vault: vault, key: newKey) {
            case .unlocked: return .ok
            case .failed: throw HandlerError(.decode, "the recovered vault does not open with the new key")
            }
        }
    }

    func rotateRecoveryKey(uid: UInt32, key: SecretBytes, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                let recovery = try vault.enrollRecoveryKey(derivedKey: key)
                noteRecoveryKey(recovery, state: state)
                let text = try recovery.printable()
                Log.notice("uid \(uid): recovery key rotated")
                return .recoveryKey(text.withUnsafeBytes { Array($0) })
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }
}
