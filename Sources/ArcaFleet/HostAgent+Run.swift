#if canImport(Glibc)
    import Glibc
#endif

/// Set by SIGTERM/SIGINT; the agent loop checks it every second.
// nonisolated(unsafe): written only by the signal handler, a sig_atomic_t as C prescribes (no lock is async-signal-safe).
nonisolated(unsafe) var stopRequested: sig_atomic_t = 0

extension HostAgent {
    /// The agent loop (arca-fleetd run). A restarted agent first watches from the
    /// revision it last applied: the changes since then wake it, and if etcd has
    /// compacted them away it re-lists at the current revision R (what left the
    /// manifest is revoked) and watches from R + 1. While etcd is unreachable it keeps
    /// serving what it has, retrying every second, until the manifest's not-after.
    public func run() throws(FleetError) {
        let keys = try keys(create: false)
        guard let adminKey = config.adminKey else { throw .usage("fleet.conf has no admin_key (run join)") }
        let verifier = HostVerifier(host: host, adminKey: adminKey, keys: keys)
        signal(SIGTERM) { _ in stopRequested = 1 }
        signal(SIGINT) { _ in stopRequested = 1 }
        var watch: EtcdWatch?
        var lastSync: Int64 = 0
        var resumeFrom = state.revision > 0 ? state.revision + 1 : 0
        log("host \(host) starting at seq \(state.seq), revision \(state.revision)")
        while stopRequested == 0 {
            if watch == nil {
                do {
                    if resumeFrom == 0 {
                        resumeFrom = try synchronize(verifier) + 1
                        lastSync = now()
                    }
                    watch = try etcd.watch(layout.manifest(host), fromRevision: resumeFrom)
                } catch {
                    enforceExpiry()
                    sleep(1)
                    continue
                }
            }
            guard let current = watch else { continue }
            switch current.next(timeoutMilliseconds: 1000) {
            case .changed:
                if let revision = try? synchronize(verifier) { resumeFrom = revision + 1 }
                lastSync = now()
            case .idle:
                if now() - lastSync >= Int64(config.resyncSeconds) {
                    _ = try? synchronize(verifier)
                    lastSync = now()
                }
                enforceExpiry()
            case .ended(let compacted, let message):
                current.cancel()
                watch = nil
                log(message + (compacted ? ": re-listing" : ""))
                // Re-list at the current revision and watch from there (compaction), or
                // after a pause when the watch failed (etcd unreachable).
                resumeFrom = 0
                if !compacted {
                    enforceExpiry()
                    sleep(1)
                }
            }
        }
        watch?.cancel()
        log("stopped")
    }
}
