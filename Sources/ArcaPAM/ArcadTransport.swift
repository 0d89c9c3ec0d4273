import ArcaClient
import ArcaProtocol

/// How the module reaches arcad: one request, one reply.
public protocol ArcadTransport {
    /// Sends `request` and returns arcad's reply.
    func send(_ request: Request) throws(ClientError) -> Reply
    /// Sends `first` and `second` and returns `first`'s reply with `second`'s reply or
    /// error; throws only when `first` got no reply. arcad decides `second` after
    /// `first`, but `second` is sent whatever `first`'s reply is. Not retried on a new
    /// connection when arcad closed a kept, idle one: `first` may have been acted on.
    func send(_ first: Request, then second: Request) throws(ClientError) -> ReplyPair
    /// Closes the connection kept from an earlier request, if any. The module calls
    /// it before every KDF run.
    func disconnect()
}

extension ArcadTransport {
    /// Transports that keep no connection have nothing to close.
    public func disconnect() {}

    /// One request after the other; a failure of `first` sends nothing more.
    public func send(_ first: Request, then second: Request) throws(ClientError) -> ReplyPair {
        let reply = try send(first)
        do {
            return ReplyPair(first: reply, second: .replied(try send(second)))
        } catch {
            return ReplyPair(first: reply, second: .failed(error))
        }
    }
}

/// The live transport: each request bounded by the `timeout=` option, on the
/// connection of the previous request of the same PAM call when there is one (a
/// login's open_session sends the unlock and the session on one connection: one
/// accept and one thread in arcad fewer). A connection is never kept across a KDF
/// run (the module calls ``disconnect()`` first: arcad may drop idle peers) nor across
/// PAM calls (the process may fork in between: the transport lives for one call).
public final class SocketTransport: ArcadTransport {
    /// arcad's socket.
    public let path: String
    /// Send and receive timeout of each request.
    public let timeoutMilliseconds: Int
    private var client: ArcadClient?

    /// A transport to `path` with the given timeout.
    public init(path: String, timeoutMilliseconds: Int) {
        self.path = path
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Sends on the kept connection, or connects; keeps the connection for the next request.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        if let kept = client {
            client = nil
            do {
                let reply = try kept.send(request)
                client = kept
                return reply
            } catch let failure where kept.mayResend(after: failure) {
                // arcad closed the kept connection before reading the request (its idle
                // timeout): once more on a new one.
            }
        }
        let fresh = try ArcadClient(path: path, timeoutMilliseconds: timeoutMilliseconds)
        let reply = try fresh.send(request)
        client = fresh
        return reply
    }

    /// Sends both requests in one write on the kept connection, or a new one, and reads
    /// both replies: one round trip, so arcad's thread and the login process each wake
    /// once instead of twice (a login's unlock and session, bench/pam/timeline.sh).
    /// Never retried on a new connection: `first` may have been acted on.
    public func send(_ first: Request, then second: Request) throws(ClientError) -> ReplyPair {
        let connection: ArcadClient
        if let kept = client {
            connection = kept
        } else {
            connection = try ArcadClient(path: path, timeoutMilliseconds: timeoutMilliseconds)
        }
        client = nil
        let replies = try connection.send(first, then: second)
        // Kept only when both replies came: after a failed read the stream is out of step.
        if case .replied = replies.second { client = connection }
        return replies
    }

    /// Closes the kept connection.
    public func disconnect() { client = nil }
}
