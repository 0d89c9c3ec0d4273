import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One throttle for every door to a user's password: each request that checks a
/// key or recovery key shares the per-uid count of consecutive wrong ones and the
/// growing delay after each (ARCHITECTURE §7; issue 14, point 4).
extension Daemon {
    /// The uid whose key or recovery key `request` checks; nil for the others.
    /// Exhaustive on purpose: a new request must say whether it is a guess.
    static func keyChecked(by request: Request) -> UInt32? {
        switch request {
        case .unlock(let uid, _), .unlockWithPassword(let uid, _), .loginUnlock(let uid, _),
            .loginUnlockDerived(let uid, _, _),
            .changePassword(let uid, _, _, _), .recover(let uid, _, _, _), .rotateRecoveryKey(let uid, _):
            return uid
        case .exportItems(let uid, _, let passphrase):
            // Sealed to the recovery key, an export checks it against the vault: a guess.
            return passphrase ? nil : uid
        case .stageExport(let uid, _, let passphrase):
            return passphrase ? nil : uid
        case .syncRecover(let uid, _, _):
            // A recovery key tried against the recovery seals: a guess.
            return uid
        case .status, .kdfParameters, .enroll, .openSession, .closeSession, .lock, .lockAll, .add, .copyMatching,
            .update, .delete, .passwordReset, .listSessions, .grant, .revokeGrant, .listGrants, .confirmCandidate,
            .addAttributeItem, .searchAttributeItems, .getAttributeItems, .updateAttributeItem, .deleteAttributeItem,
            .waitEvents, .searchAttributeReferences, .collectionSettings,
            .importItems, .syncInit, .syncJoin, .syncApprove, .syncPull, .syncPush, .syncRemove, .syncStatus,
            .syncConflicts, .syncResolve, .readExport, .stageImport, .importStaged:
            // passwordReset checks whether the vault already opens with the new key:
            // a root-only bookkeeping step, not a guess.
            return nil
        }
    }

    /// Runs a request that checks the key of `uid`: a wrong key (errSecAuthFailed,
    /// or a candidate from `loginUnlock`) counts, a right one resets the count.
    ///
    /// A user's own process is then delayed (0.25 s doubling, at most 2 s) and
    /// holds its uid's guess turn meanwhile, so parallel connections guess no
    /// faster than one. The turn is the peer's own (a user may name only their own
    /// uid), so nobody can hold up another user. The login stack (root) is neither
    /// delayed nor queued: PAM already judged the password, and a login must never
    /// wait on Arca.
    func checkingKey(of uid: UInt32, peer: PeerCredentials, _ body: () throws(HandlerError) -> Reply)
        throws(HandlerError) -> Reply
    {
        guard !peer.isRoot else { return try counting(uid, body) }
        return try context(peer.uid).inGuessTurn { () throws(HandlerError) -> Reply in
            do throws(HandlerError) {
                return try counting(uid, body)
            } catch {
                if error.status == .authFailed {
                    let count = (try? context(uid).withLock { state throws(HandlerError) in state.failures }) ?? 1
                    usleep(UInt32(Self.failureDelay(consecutive: count) * 1_000_000))
                }
                throw error
            }
        }
    }

    /// 0.25 s, doubling per consecutive failure, at most 2 s.
    static func failureDelay(consecutive count: Int) -> Double {
        min(2.0, 0.25 * Double(1 << min(max(count - 1, 0), 6)))
    }

    private func counting(_ uid: UInt32, _ body: () throws(HandlerError) -> Reply) throws(HandlerError) -> Reply {
        let reply: Reply
        do {
            reply = try body()
        } catch {
            if error.status == .authFailed { countFailure(uid) }
            throw error
        }
        if case .candidate = reply {
            countFailure(uid)
        } else if case .staleParameters = reply {
            // The key was derived with parameters that are not the vault's (a stale published
            // copy): it says nothing about the password. No count, no reset.
        } else if case .syncDevice = reply {
            // `sync recover` opened a seal, which proves nothing about this vault's keys: the
            // user's own process could have sealed to a recovery key it made. No reset.
        } else {
            try? context(uid).withLock { state throws(HandlerError) in state.failures = 0 }
        }
        return reply
    }

    private func countFailure(_ uid: UInt32) {
        let count =
            (try? context(uid).withLock { state throws(HandlerError) -> Int in
                state.failures += 1
                return state.failures
            }) ?? 0
        Log.warning("uid \(uid): wrong password or key (\(count) in a row)")
    }
}
