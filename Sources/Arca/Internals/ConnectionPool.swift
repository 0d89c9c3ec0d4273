import ArcaClient
import ArcaProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A few open connections to one arcad socket, shared by every ``Keychain``
/// and `SecItem…` call of the process that uses that socket.
///
/// `ArcadClient` is a blocking, single-threaded connection; each call borrows
/// one for the length of a request and puts it back, so concurrent tasks never
/// share a connection and a process keeps at most ``maximumIdle`` sockets open.
///
/// arcad decides every request from the credentials the kernel recorded when
/// the connection was made (`SO_PEERCRED`, `SO_PEERGROUPS`). A connection is
/// therefore reused only by the process and credentials that made it
/// (``Owner``): after `fork` the child, and after `setuid`/`setgid`/`setgroups`
/// the caller, opens its own, so a process that dropped root never speaks with
/// root's voice, and a child never shares (and interleaves on) its parent's socket.
final class ConnectionPool: Sendable {
    /// Connections kept open between calls.
    static let maximumIdle = 4
    /// How long a request may wait for arcad, in milliseconds.
    static let timeoutMilliseconds = 5_000

    let path: String
    // ArcadClient is not Sendable; each one is only ever used by the caller that popped it.
    private let idle = Mutex<[PooledConnection]>([])

    private init(path: String) { self.path = path }

    private static let pools = Mutex<[String: ConnectionPool]>([:])

    /// The process-wide pool of a socket path.
    static func shared(path: String) -> ConnectionPool {
        pools.withLock { pools in
            if let pool = pools[path] { return pool }
            let pool = ConnectionPool(path: path)
            pools[path] = pool
            return pool
        }
    }

    /// Sends one request on a borrowed connection. A reused connection that
    /// arcad has closed meanwhile (idle past its client_timeout_ms) is replaced
    /// once, when the failure proves arcad never read the request
    /// (`ArcadClient.mayResend(after:)`); any other failure is final, so a request
    /// is never sent twice after arcad may have seen it.
    func send(_ request: Request) throws(KeychainError) -> Reply {
        var (connection, reused) = try borrow()
        while true {
            do {
                let reply = try connection.client.send(request)
                giveBack(connection)
                return reply
            } catch {
                guard reused, connection.client.mayResend(after: error) else {
                    throw KeychainError.from(error)
                }
                (connection, reused) = try (connect(), false)
            }
        }
    }

    private func borrow() throws(KeychainError) -> (PooledConnection, Bool) {
        let caller = Owner.current()
        // Connections made by another owner (a parent before fork, this process
        // before setuid) are dropped: closing this process's copy of the socket
        // leaves the parent's own untouched.
        let pooled = idle.withLock { idle -> PooledConnection? in
            idle.removeAll { $0.owner != caller }
            return idle.popLast()
        }
        if let pooled { return (pooled, true) }
        return (try connect(), false)
    }

    private func connect() throws(KeychainError) -> PooledConnection {
        // The owner is read before connecting: the kernel records the credentials at connect.
        let owner = Owner.current()
        do {
            return PooledConnection(
                client: try ArcadClient(path: path, timeoutMilliseconds: Self.timeoutMilliseconds), owner: owner)
        } catch {
            throw KeychainError.from(error)
        }
    }

    private func giveBack(_ connection: PooledConnection) {
        // Credentials that changed during the request make the connection another's.
        guard connection.owner == Owner.current() else { return }
        idle.withLock { idle in
            if idle.count < Self.maximumIdle { idle.append(connection) }
        }
    }

    /// Who a connection speaks for: the process and the credentials arcad saw at connect.
    struct Owner: Equatable {
        let pid: Int32
        let euid: UInt32
        let egid: UInt32
        let groups: [UInt32]

        /// The calling thread's (credentials are per thread in the kernel).
        static func current() -> Owner {
            Owner(pid: getpid(), euid: geteuid(), egid: getegid(), groups: supplementaryGroups())
        }

        /// The corresponding C function is `getgroups`.
        private static func supplementaryGroups() -> [UInt32] {
            var groups = [gid_t](repeating: 0, count: 32)
            while true {
                let n = getgroups(Int32(groups.count), &groups)
                if n >= 0 { return groups.prefix(Int(n)).sorted() }
                let failure = errno
                let needed = getgroups(0, nil)
                guard failure == EINVAL, needed > groups.count else { return [] }
                groups = [gid_t](repeating: 0, count: Int(needed))
            }
        }
    }
}

/// A connection and its owner, moved in and out of the pool's lock. A connection
/// is used by one caller at a time (the one that took it out), so sending it is safe.
// @unchecked: ArcadClient is a class with a mutable request counter, used by one caller at a time.
private struct PooledConnection: @unchecked Sendable {
    let client: ArcadClient
    let owner: ConnectionPool.Owner
}
