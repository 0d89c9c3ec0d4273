import ArcaProtocol
import ArcaSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Decides one request. Implementations must be thread-safe: the server calls
/// them from one thread per connection (threads are reused: ConnectionWorkers).
public protocol RequestHandling: Sendable {
    /// The reply to `request` from `peer`. May wipe secrets in `request`.
    func handle(_ request: inout Request, from peer: PeerCredentials) -> Reply
    /// The connection `peer.connection` closed: drop whatever was kept for it.
    func connectionClosed(_ peer: PeerCredentials)
}

extension RequestHandling {
    /// Nothing kept per connection.
    public func connectionClosed(_ peer: PeerCredentials) {}
}

/// The socket front of arcad: accepts connections, reads frames, hands decoded
/// requests to the handler and writes replies.
///
/// A connection that sends a malformed frame is closed (the daemon is not
/// affected). Each request must arrive whole within the client timeout, and its
/// reply be taken within it, however slowly the client trickles; memory follows
/// the bytes that arrived, never the length a header announces. One uid may hold
/// at most `maxConnectionsPerUID` connections, and arcad at most `maxConnections`
/// in all (each is a thread and a buffer); besides those, up to `maxIdle + 1` (5)
/// threads wait in accept(2) for the next connection (ConnectionWorkers).
public final class Server: Sendable {
    private let listener: Int32
    private let handler: any RequestHandling
    private let timeoutMilliseconds: Int
    private let maxConnectionsPerUID: Int
    private let maxConnections: Int
    private let connections = Mutex<[UInt32: Int]>([:])
    private let stopping = Atomic<Bool>(false)
    private let workers = ConnectionWorkers()
    private let connectionNumbers = Atomic<UInt64>(1)
    /// The current run of failed accept(2) calls (AcceptFailures).
    private let acceptFailures = Mutex(AcceptFailures())
    /// Where `run()` waits for `stop()`.
    private let stopped = Condition()
    /// How long a connection thread waits in `accept` before it exits (the last one stays).
    static let idleSeconds = 30
    /// Connections root may hold at once.
    static let rootConnectionLimit = 1024

    /// Listens at `path` (mode 0666: `SO_PEERCRED` decides), creating its directory
    /// (0755) if needed; or adopts a socket passed by systemd (`LISTEN_FDS`).
    public convenience init(config: DaemonConfig, handler: any RequestHandling) throws {
        let listener: Int32
        if let inherited = Self.systemdSocket() {
            listener = inherited
            Log.info("using the socket passed by systemd")
        } else {
            try Self.makeDirectory(parentOf: config.socketPath)
            listener = try SocketSystem.listen(path: config.socketPath, mode: 0o666)
            Log.info("listening on \(config.socketPath)")
        }
        try self.init(listener: listener, config: config, handler: handler)
    }

    /// Serves on `listener`, a listening socket arcad made or a launcher passed.
    init(listener: Int32, config: DaemonConfig, handler: any RequestHandling) throws {
        self.listener = listener
        self.handler = handler
        timeoutMilliseconds = config.clientTimeoutMilliseconds
        maxConnectionsPerUID = config.maxConnectionsPerUID
        maxConnections = config.maxConnections
        // A launcher may pass the socket non-blocking; then accept(2) would return at once
        // instead of waiting out the idle time, and the last accepting thread would spin.
        if try SocketSystem.setBlocking(listener) { Log.notice("the listening socket was non-blocking: made blocking") }
        // accept(2) honours the listener's receive timeout: how idle connection threads leave.
        try SocketSystem.setTimeouts(listener, milliseconds: Self.idleSeconds * 1000)
    }

    /// Serves connections until `stop()`: starts the first connection thread
    /// (ConnectionWorkers), then waits.
    public func run() {
        while !stopping.load(ordering: .relaxed) {
            do {
                try workers.start(Listening(server: self))
                break
            } catch {
                Log.error("cannot start the accepting thread: \(error)")
                usleep(100_000)
            }
        }
        stopped.withLock {
            while !stopping.load(ordering: .relaxed) { stopped.wait() }
        }
    }

    /// Stops accepting; connections in progress finish.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        stopped.withLock { stopped.broadcast() }
    }

    /// The listening socket as the connection threads see it.
    private struct Listening: ConnectionSource {
        let server: Server
        func accept() -> AcceptEvent<Admitted> { server.acceptOne() }
        func serve(_ connection: Admitted) { server.serve(connection) }
        func refuse(_ connection: Admitted, because error: any Error) {
            Log.error("cannot start a connection thread: \(error)")
            connection.peer.socket?.end()
            close(connection.fd)
            server.release(connection.peer)
        }
    }

    /// A connection counted against its uid's and arcad's limits.
    struct Admitted: Sendable {
        let fd: Int32
        let peer: PeerCredentials
    }

    /// One `accept(2)` on the listener, and the admission of what it returned.
    private func acceptOne() -> AcceptEvent<Admitted> {
        let client: Int32
        do {
            client = try SocketSystem.accept(listener, nonBlocking: true)
        } catch {
            if stopping.load(ordering: .relaxed) { return .stopped }
            switch error.errno {
            case .wouldBlock: return .idle  // the listener's receive timeout: nothing within the idle time
            case .connectionAborted: return .nothing  // that client gave up; the next may not
            default:
                // Up to maxIdle + 1 threads accept: without a pause each would retry at once.
                let pause = acceptFailures.withLock { $0.failed(error) }
                usleep(pause)
                return .nothing
            }
        }
        acceptFailures.withLock { $0.succeeded() }
        // accept(2) after shutdown(2) still hands out connections that were queued:
        // a stopped server serves nothing more.
        if stopping.load(ordering: .relaxed) {
            close(client)
            return .stopped
        }
        guard let peer = admit(client) else { return .nothing }
        return .connection(Admitted(fd: client, peer: peer))
    }

    /// The peer of a new connection, counted against its uid's and arcad's limits; nil
    /// (and the connection closed) when it is refused.
    private func admit(_ fd: Int32) -> PeerCredentials? {
        var peer: PeerCredentials
        do {
            peer = try SocketSystem.peerCredentials(fd)
            // Only root (the login stack) opens sessions, and a session is bound to the
            // process that opened it: SO_PEERPIDFD names that process when the session opens;
            // a kernel without it leaves the start time read now, before the pid can be reused.
            if peer.isRoot && PeerSocket.mayLackPeerPidfd { peer.startTime = ProcessHandle.startTime(of: peer.pid) }
            peer.socket = PeerSocket(fd: fd)
            peer.connection = connectionNumbers.wrappingAdd(1, ordering: .relaxed).oldValue
        } catch {
            Log.warning("connection refused: \(error)")
            close(fd)
            return nil
        }
        // Root is the login stack of every user (PAM in login, sshd, display
        // managers), so it gets a wider bound than one user's processes.
        let limit = peer.isRoot ? max(maxConnectionsPerUID, Self.rootConnectionLimit) : maxConnectionsPerUID
        let refusal = connections.withLock { counts -> String? in
            let current = counts[peer.uid, default: 0]
            guard current < limit else { return "uid \(peer.uid) has \(limit) connections open" }
            guard counts.values.reduce(0, +) < maxConnections else { return "\(maxConnections) connections open" }
            counts[peer.uid] = current + 1
            return nil
        }
        if let refusal {
            Log.warning("\(refusal); closing a new one from uid \(peer.uid)")
            close(fd)
            return nil
        }
        return peer
    }

    /// Converses on an admitted connection, then closes it and releases its count.
    private func serve(_ connection: Admitted) {
        converse(connection.fd, peer: connection.peer)
        connection.peer.socket?.end()
        close(connection.fd)
        handler.connectionClosed(connection.peer)
        release(connection.peer)
    }

    /// A connection of `peer` ended: one fewer counted against its uid.
    private func release(_ peer: PeerCredentials) {
        connections.withLock { counts in
            counts[peer.uid, default: 1] -= 1
            if counts[peer.uid] == 0 { counts[peer.uid] = nil }
        }
    }

    /// Request, reply, until the client closes, misbehaves or runs out of time.
    private func converse(_ fd: Int32, peer: PeerCredentials) {
        var buffer: [UInt8] = []
        defer { SecureWipe.zero(&buffer) }
        while true {
            // The timeout bounds the whole request, not each read: a client that
            // sends one byte a second cannot hold its thread and buffer for longer.
            let deadline = Deadline.after(milliseconds: timeoutMilliseconds)
            var decoded: DecodedFrame<Request>
            read: while true {
                switch Frame.decode(buffer, as: Request.self) {
                case .needMore(let count):
                    guard (try? SocketSystem.receive(fd, upTo: count, appendingTo: &buffer, until: deadline)) == true
                    else { return }  // closed, out of time or failed: end the conversation
                case .invalid(let error):
                    Log.warning("uid \(peer.uid) pid \(peer.pid): malformed request (\(error)); connection closed")
                    return
                case .complete(let complete):
                    decoded = complete
                    break read
                }
            }
            SecureWipe.removeFirst(decoded.length, from: &buffer)
            guard reply(to: &decoded, on: fd, peer: peer) else { return }
        }
    }

    /// Handles one request and sends the reply; false if the client did not take it in time.
    private func reply(to decoded: inout DecodedFrame<Request>, on fd: Int32, peer: PeerCredentials) -> Bool {
        var reply = handler.handle(&decoded.message, from: peer)
        decoded.message.wipeSecrets()
        var frame: [UInt8]
        do {
            frame = try Frame.encode(reply, requestID: decoded.requestID)
        } catch {
            Log.error("cannot encode a reply to uid \(peer.uid): \(error)")
            // Only a reply past one frame is `bufferTooSmall` (a batching client splits on it);
            // any other encoding failure stays the `.decode` error it always was.
            let status: ArcaStatus
            if case .frameTooLarge = error { status = .bufferTooSmall } else { status = .decode }
            frame =
                (try? Frame.encode(
                    .error(status: status, message: ProtocolLimits.replyTooLargeMessage),
                    requestID: decoded.requestID)) ?? []
        }
        reply.wipeSecrets()
        let deadline = Deadline.after(milliseconds: timeoutMilliseconds)
        let sent = frame.withUnsafeBytes { (try? SocketSystem.send(fd, $0, until: deadline)) == true }
        SecureWipe.zero(&frame)
        return sent
    }

    /// The first socket of systemd socket activation, if this process is its target.
    private static func systemdSocket() -> Int32? {
        guard let pidText = getenv("LISTEN_PID"), let fdsText = getenv("LISTEN_FDS"),
            Int32(String(cString: pidText)) == getpid(), let count = Int(String(cString: fdsText)), count >= 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        return 3
    }

    static func makeDirectory(parentOf path: String) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        if mkdir(directory, 0o755) == 0 {
            // arcad runs with umask 077; every user must reach the socket inside.
            chmod(directory, 0o755)
        } else if errno != EEXIST {
            throw SystemError(call: "mkdir \(directory)", errno: .current)
        }
    }
}
