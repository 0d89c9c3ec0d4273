import ArcaSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What arcad asks the kernel about a connection's peer only when a request needs it:
/// its supplementary groups (`SO_PEERGROUPS`) and a pidfd for its process
/// (`SO_PEERPIDFD`). Both are what the kernel recorded when the peer connected, so
/// asking later gives the answer accept would have: a process that changes its groups
/// or exits after connecting changes neither. Only `SO_PEERCRED` (uid, gid, pid) is read
/// on accept, for the per-uid limit and every authorization.
///
/// The descriptor is the server's: ``end()`` is called before it is closed, after
/// which nothing is read through it (the number may already name another connection).
final class PeerSocket: Sendable {
    private struct State {
        var fd: Int32
        var groups: [UInt32]?
    }
    private let state: Mutex<State>

    /// Whether the kernel has `SO_PEERPIDFD` (Linux 6.5): 0 not known yet, 1 yes, -1 no.
    /// Until it is known to, the server reads a root peer's start time on accept. Internal
    /// so that tests which ask a socket for a pidfd can restore it.
    static let pidfdSupport = Atomic<Int8>(0)

    init(fd: Int32) { state = Mutex(State(fd: fd, groups: nil)) }

    /// Whether a pidfd for the peer may be missing, so that its start time must be read now.
    static var mayLackPeerPidfd: Bool { pidfdSupport.load(ordering: .relaxed) != 1 }

    /// The peer's supplementary groups when it connected, read once. Empty (no group grant
    /// applies: the request fails closed) when the connection has ended or they cannot be
    /// read. The corresponding C function is `getsockopt(SO_PEERGROUPS)`.
    var groups: [UInt32] {
        state.withLock { state -> [UInt32] in
            if let groups = state.groups { return groups }
            guard state.fd >= 0 else { return [] }
            do {
                let groups = try UnixSocket.peerGroups(FileDescriptor(rawValue: state.fd))
                state.groups = groups
                return groups
            } catch {
                Log.warning("getsockopt(SO_PEERGROUPS): \(error); no group grants for this connection")
                state.groups = []
                return []
            }
        }
    }

    /// A new pidfd (the caller closes it) for the process that connected. The failure is
    /// ``Errno/noProtocolOption`` on a kernel without `SO_PEERPIDFD` and
    /// ``Errno/badFileDescriptor`` once the connection has ended. The corresponding C
    /// function is `getsockopt(SO_PEERPIDFD)`.
    func process() -> Result<FileDescriptor, Errno> {
        let result = state.withLock { state -> Result<FileDescriptor, Errno> in
            guard state.fd >= 0 else { return .failure(.badFileDescriptor) }
            return Result { () throws(Errno) in try UnixSocket.peerProcess(FileDescriptor(rawValue: state.fd)) }
        }
        switch result {
        case .success: Self.pidfdSupport.store(1, ordering: .relaxed)
        case .failure(.noProtocolOption): Self.pidfdSupport.store(-1, ordering: .relaxed)
        case .failure: break
        }
        return result
    }

    /// The connection ends: its descriptor is about to be closed.
    func end() { state.withLock { $0.fd = -1 } }
}
