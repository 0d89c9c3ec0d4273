import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// PAM sessions: open, close and list, each an event of the user's lock-state
/// machine, which holds the one session table. (Sessions whose opener died or
/// whose logind session ended are closed by `Daemon+Reaping.swift`.)
extension Daemon {
    /// Sessions are opened and closed by the login stack, which runs as root: a
    /// user's own process could otherwise hold whenUnlocked open with fake sessions.
    func openSession(_ opening: SessionOpening, peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        guard !opening.token.isEmpty else { throw .param("an empty session token") }
        return try context(opening.uid).withLock { state throws(HandlerError) -> Reply in
            let id = SessionID(opening.token)
            // The record is made (and a session number taken) only for a new token.
            if state.lock.sessions[id] == nil {
                let record = SessionRecord(
                    number: nextSessionNumber(), service: opening.service, tty: opening.tty,
                    remoteHost: opening.remoteHost, remoteUser: opening.remoteUser, openedAt: Self.nowMicroseconds(),
                    opener: opener(of: peer), logindSession: ProcessHandle.logindSession(of: peer.pid))
                let effects = state.lock.openSession(id, record)
                if let vault = state.vault { apply(effects, to: state, vault: vault) }
            }
            Log.info("uid \(opening.uid): session opened (\(opening.service), \(state.lock.sessionCount) open)")
            return .ok
        }
    }

    func closeSession(uid: UInt32, token: [UInt8], peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let effects = state.lock.closeSession(SessionID(token))
            if let vault = state.vault { apply(effects, to: state, vault: vault) }
            Log.info("uid \(uid): session closed (\(state.lock.sessionCount) open)")
            try requireKernelRemoved(state)
            return .ok
        }
    }

    func listSessions(peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        var list: [SessionInfo] = []
        for context in allContexts() {
            try context.withLock { state throws(HandlerError) in
                for (id, record) in state.lock.sessions {
                    list.append(
                        SessionInfo(
                            id: record.number, uid: state.uid, service: record.service, tty: record.tty,
                            remoteHost: record.remoteHost, remoteUser: record.remoteUser, openedAt: record.openedAt,
                            locked: state.lock.isLocked(id) ?? true))
                }
            }
        }
        return .sessions(list.sorted { $0.id < $1.id })
    }

    static func nowMicroseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000
    }
}
