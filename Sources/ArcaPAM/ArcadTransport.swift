import ArcaClient
import ArcaProtocol

/// How the module reaches arcad: one request, one reply.
public protocol ArcadTransport {
    /// Sends `request` and returns arcad's reply.
    func send(_ request: Request) throws(ClientError) -> Reply
}

/// The live transport: a fresh connection per request, each bounded by the
/// `timeout=` option. A connection is never kept across a KDF run (arcad may
/// drop idle peers) nor across PAM calls (the process may fork in between).
public struct SocketTransport: ArcadTransport {
    /// arcad's socket.
    public var path: String
    /// Send and receive timeout of each request.
    public var timeoutMilliseconds: Int

    /// A transport to `path` with the given timeout.
    public init(path: String, timeoutMilliseconds: Int) {
        self.path = path
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Connects, sends, reads the reply, disconnects.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        let client = try ArcadClient(path: path, timeoutMilliseconds: timeoutMilliseconds)
        return try client.send(request)
    }
}
