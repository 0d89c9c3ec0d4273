import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Sessions whose opener died. A PAM application killed with SIGKILL (or a
/// crash) never closes its session; counted forever, it would keep whenUnlocked
/// in the kernel after logout, and a user could make such a session on purpose
/// (setuid `su $USER`, then kill -9). Each session is bound to the process that
/// opened it, and to the logind session that process was in; when either is
/// gone, the session closes as if PAM had closed it.
extension Daemon {
    /// How often `reapSessions` runs: a dead opener's session ends within this.
    static let reapIntervalMicroseconds: UInt32 = 250_000

    /// The process a session opened by `peer` is bound to. Nil for a peer in
    /// another pid namespace (a container's login stack), whose pid reads as 0:
    /// such a session ends only when closed, as before binding existed.
    func opener(of peer: PeerCredentials) -> ProcessHandle? {
        guard peer.pid > 0 else {
            Log.info("uid \(peer.uid): a session opener with no pid here (another pid namespace): not bound")
            return nil
        }
        switch peer.socket?.process() {
        case .success(let pidfd):
            // The kernel's record of the process that connected: no pid to be reused.
            return ProcessHandle.adopting(pidfd: pidfd, pid: peer.pid)
        case .failure(.noSuchProcess), .failure(.invalidArgument):
            return ProcessHandle.gone(pid: peer.pid)  // the opener has exited and been reaped
        case .failure(.noProtocolOption), nil:
            // No SO_PEERPIDFD (the start time was read on accept), or no socket (in process).
            return ProcessHandle.open(pid: peer.pid, startTime: peer.startTime)
        case .failure(let error):
            // EMFILE, ENOMEM: with no start time read on accept, a bare pid could name
            // another process by now; the session ends at the next reap instead.
            guard peer.startTime != nil else {
                Log.warning("uid \(peer.uid): getsockopt(SO_PEERPIDFD): \(error); the session ends at the next reap")
                return ProcessHandle.gone(pid: peer.pid)
            }
            return ProcessHandle.open(pid: peer.pid, startTime: peer.startTime)
        }
    }

    /// Closes every session whose opener has exited, with the usual lock effects
    /// (the last session gone removes whenUnlocked).
    public func reapSessions() {
        close(sessionsWhere: { $0.opener?.hasExited == true }, reason: "its process is gone")
    }

    private func close(sessionsWhere ended: (SessionRecord) -> Bool, reason: String) {
        for context in allContexts() {
            try? context.withLock { state throws(HandlerError) in
                for (id, record) in state.lock.sessions where ended(record) {
                    let effects = state.lock.closeSession(id)
                    if let vault = state.vault { apply(effects, to: state, vault: vault) }
                    Log.notice(
                        "uid \(state.uid): session (\(record.service), pid \(record.opener?.pid ?? 0)) "
                            + "ended without closing: \(reason) (\(state.lock.sessionCount) open)")
                }
            }
        }
    }

    /// Closes every session opened from within logind session `id`, which has
    /// ended (`SessionRemoved`), with the usual lock effects.
    public func logindSessionEnded(_ id: String) {
        close(sessionsWhere: { $0.logindSession == id }, reason: "its logind session \(id) ended")
    }

    /// Runs `reapSessions` every quarter second on its own thread, forever.
    public func startSessionReaper() {
        do {
            try Threads.detach { [self] in
                while true {
                    usleep(Self.reapIntervalMicroseconds)
                    reapSessions()
                }
            }
        } catch {
            Log.error("cannot start the session reaper thread: \(error)")
        }
    }
}
