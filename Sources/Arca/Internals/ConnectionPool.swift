import ArcaProtocol
import Synchronization

/// A few open connections to one arcad socket, shared by every ``Keychain``
/// and `SecItem…` call of the process that uses that socket.
///
/// `ArcadClient` is a blocking, single-threaded connection; each call borrows
/// one for the length of a request and puts it back, so concurrent tasks never
/// share a connection and a process keeps at most ``maximumIdle`` sockets open.
final class ConnectionPool: Sendable {
    /// Connections kept open between calls.
    static let maximumIdle = 4
    /// How long a request may wait for arcad, in milliseconds.
    static let timeoutMilliseconds = 5_000

    let path: String
    // ArcadClient is not Sendable; each one is only ever used by the caller that popped it.
    private let idle = Mutex<[ArcadClientBox]>([])

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
    /// arcad has closed meanwhile is replaced once; a fresh connection's
    /// failure is final, so a request is never sent twice after arcad saw it.
    func send(_ request: Request) throws(KeychainError) -> Reply {
        var (client, reused) = try borrow()
        while true {
            do {
                let reply = try client.send(request)
                giveBack(client)
                return reply
            } catch {
                guard reused, error == .connectionClosed || isBrokenPipe(error) else {
                    throw KeychainError.from(error)
                }
                (client, reused) = try (connect(), false)
            }
        }
    }

    private func isBrokenPipe(_ error: ClientError) -> Bool {
        if case .system(let call, _) = error, call == "send" { return true }
        return false
    }

    private func borrow() throws(KeychainError) -> (ArcadClient, Bool) {
        if let pooled = idle.withLock({ $0.popLast() }) { return (pooled.client, true) }
        return (try connect(), false)
    }

    private func connect() throws(KeychainError) -> ArcadClient {
        do {
            return try ArcadClient(path: path, timeoutMilliseconds: Self.timeoutMilliseconds)
        } catch {
            throw KeychainError.from(error)
        }
    }

    private func giveBack(_ client: ArcadClient) {
        idle.withLock { idle in
            if idle.count < Self.maximumIdle { idle.append(ArcadClientBox(client: client)) }
        }
    }
}

/// Moves a connection in and out of the pool's lock. A connection is used by
/// one caller at a time (the one that took it out), so sending it is safe.
private struct ArcadClientBox: @unchecked Sendable {
    let client: ArcadClient
}
