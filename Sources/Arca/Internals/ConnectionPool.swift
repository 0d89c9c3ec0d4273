import ArcaProtocol
import Foundation

/// A few open connections to one arcad socket, shared by every ``Keychain``
/// and `SecItem…` call of the process that uses that socket.
///
/// `ArcadClient` is a blocking, single-threaded connection; each call borrows
/// one for the length of a request and puts it back, so concurrent tasks never
/// share a connection and a process keeps at most ``maximumIdle`` sockets open.
final class ConnectionPool: @unchecked Sendable {
    /// Connections kept open between calls.
    static let maximumIdle = 4
    /// How long a request may wait for arcad, in milliseconds.
    static let timeoutMilliseconds = 5_000

    let path: String
    // Guarded by `lock`; `@unchecked Sendable` rests on this.
    private let lock = NSLock()
    private var idle: [ArcadClient] = []

    private init(path: String) { self.path = path }

    private static let poolsLock = NSLock()
    nonisolated(unsafe) private static var pools: [String: ConnectionPool] = [:]

    /// The process-wide pool of a socket path.
    static func shared(path: String) -> ConnectionPool {
        poolsLock.lock()
        defer { poolsLock.unlock() }
        if let pool = pools[path] { return pool }
        let pool = ConnectionPool(path: path)
        pools[path] = pool
        return pool
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
        lock.lock()
        let pooled = idle.popLast()
        lock.unlock()
        if let pooled { return (pooled, true) }
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
        lock.lock()
        defer { lock.unlock() }
        if idle.count < Self.maximumIdle { idle.append(client) }
    }
}
