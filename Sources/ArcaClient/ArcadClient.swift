import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Why a request to arcad did not get a reply.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens at the socket path (ENOENT, ECONNREFUSED…): arcad is not running.
    case notRunning(path: String, errno: Errno)
    /// arcad did not answer within the timeout.
    case timedOut
    /// The connection closed before a whole reply arrived.
    case connectionClosed
    /// The reply was malformed.
    case malformedReply(ProtocolError)
    /// The request could not be encoded (a field over its limit).
    case invalidRequest(ProtocolError)
    /// Another system call failed.
    case system(call: String, errno: Errno)

    /// The OSStatus this maps to: arcad unreachable is `errSecNotAvailable`.
    public var status: ArcaStatus {
        switch self {
        case .notRunning, .timedOut, .connectionClosed, .system: .notAvailable
        case .malformedReply: .decode
        case .invalidRequest: .param
        }
    }

    public var description: String {
        switch self {
        case .notRunning(let path, let e): "arcad is not running (\(path): \(String(cString: strerror(e.rawValue))))"
        case .timedOut: "arcad did not answer in time"
        case .connectionClosed: "arcad closed the connection"
        case .malformedReply(let e): "malformed reply from arcad: \(e)"
        case .invalidRequest(let e): "invalid request: \(e)"
        case .system(let call, let e): "\(call): \(String(cString: strerror(e.rawValue)))"
        }
    }
}

/// A blocking connection to arcad, for the PAM module, the CLI and the library.
///
/// This type is the codec's side of a connection; the socket calls are
/// ArcaSystem's ``UnixSocket``. No Foundation, no threads: every call is a plain
/// syscall bounded by `SO_RCVTIMEO`/`SO_SNDTIMEO`, so a dead or stuck daemon costs
/// a caller at most the timeout (the PAM module must never hang a login). Frames
/// that carried secrets are zeroed after use.
public final class ArcadClient {
    /// The default socket (``ArcadSocket/defaultPath``).
    public static let defaultSocketPath = ArcadSocket.defaultPath

    /// `ARCA_SOCKET` if set and non-empty, else the default.
    public static var environmentSocketPath: String {
        if let value = getenv("ARCA_SOCKET"), value.pointee != 0 { return String(cString: value) }
        return defaultSocketPath
    }

    private let socket: FileDescriptor
    private var nextRequestID: UInt32 = 1
    /// After ``send(_:)`` failed: true when arcad cannot have read the whole request, so it
    /// cannot have carried it out and sending it again on a new connection is safe. That is
    /// a failed write (EPIPE: arcad had closed the connection, e.g. one idle past its
    /// client_timeout_ms), or a reset while waiting for the reply (the kernel resets the
    /// peer of a socket closed with bytes unread). A plain end of stream after the whole
    /// request was written leaves it false: arcad may have acted on it and then gone away.
    /// The reset case holds because arcad reads exactly one frame at a time (Server's
    /// `converse` asks for what the frame still needs), so bytes left unread are ours.
    /// After ``send(_:then:)`` it is true only when the write failed.
    public private(set) var requestUnread = false

    /// Whether the request whose ``send(_:)`` threw `error` may be sent once more, on a new
    /// connection: arcad cannot have read it (``requestUnread``), and it did not time out
    /// (sending again would double the wait on a slow arcad). The one rule every kept
    /// connection (the library's pool, pam_arca, arca-secretd) retries by.
    public func mayResend(after error: ClientError) -> Bool { requestUnread && error != .timedOut }
    /// The socket path this client is connected to.
    public let path: String

    /// Connects, with send/receive timeouts of `timeoutMilliseconds`.
    public init(path: String = ArcadClient.environmentSocketPath, timeoutMilliseconds: Int = 5_000) throws(ClientError)
    {
        self.path = path
        do {
            socket = try UnixSocket.connect(path: path, timeoutMilliseconds: timeoutMilliseconds)
        } catch .wouldBlock {
            // ArcaSystem's one "timed out" for a connect of any socket kind.
            throw .timedOut
        } catch {
            throw .notRunning(path: path, errno: error)
        }
    }

    deinit { socket.close() }

    /// Sends one request and waits for its reply. The request's secrets are not
    /// wiped here (the caller owns the value); the frame buffers are.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        let id = nextRequestID
        nextRequestID &+= 1
        requestUnread = false
        var frame = try Self.encode(request, id: id)
        defer { SecureWipe.zero(&frame) }
        try writeAll(frame)
        return try receiveReply(to: id)
    }

    /// Sends `first` and `second` in one write, then reads their replies in order:
    /// one round trip instead of two. arcad answers the requests of a connection one
    /// after the other, in order, so `second` is decided after `first` exactly as if it
    /// had been sent after `first`'s reply; but it is sent whatever that reply is. The
    /// requests' secrets are not wiped here; the frame buffers are.
    ///
    /// Throws only when the write or `first`'s reply fails; once `first` is answered its
    /// reply is returned, with `second`'s reply or the error that read met, because arcad
    /// has acted on `first` (an unlock) and the caller must still see and wipe that reply.
    public func send(_ first: Request, then second: Request) throws(ClientError) -> ReplyPair {
        let id = nextRequestID
        nextRequestID &+= 2
        requestUnread = false
        var one = try Self.encode(first, id: id)
        defer { SecureWipe.zero(&one) }
        var two = try Self.encode(second, id: id &+ 1)
        defer { SecureWipe.zero(&two) }
        // Reserved up front, so that appending never reallocates and leaves a stale copy.
        var frames: [UInt8] = []
        frames.reserveCapacity(one.count + two.count)
        defer { SecureWipe.zero(&frames) }
        frames.append(contentsOf: one)
        frames.append(contentsOf: two)
        try writeAll(frames)
        let firstReply: Reply
        do { firstReply = try receiveReply(to: id) } catch {
            // A reset here may come after arcad carried out `first` with only `second`
            // left unread: neither may be called unread.
            requestUnread = false
            throw error
        }
        do {
            return ReplyPair(first: firstReply, second: .replied(try receiveReply(to: id &+ 1)))
        } catch {
            requestUnread = false  // `first` was carried out: the pair is not unread
            return ReplyPair(first: firstReply, second: .failed(error))
        }
    }

    private static func encode(_ request: Request, id: UInt32) throws(ClientError) -> [UInt8] {
        do {
            return try Frame.encode(request, requestID: id)
        } catch {
            throw .invalidRequest(error)
        }
    }

    /// Reads one whole reply frame, which must answer request `id`.
    private func receiveReply(to id: UInt32) throws(ClientError) -> Reply {
        var buffer: [UInt8] = []
        defer { SecureWipe.zero(&buffer) }
        while true {
            switch Frame.decode(buffer, as: Reply.self) {
            case .complete(let decoded):
                guard decoded.requestID == id else { throw .malformedReply(.invalidValue(field: "request id")) }
                return decoded.message
            case .invalid(let error):
                throw .malformedReply(error)
            case .needMore(let count):
                try read(count, into: &buffer)
            }
        }
    }

    private func writeAll(_ bytes: [UInt8]) throws(ClientError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) in try UnixSocket.sendAll(socket, raw) }
        }
        if case .failure = result { requestUnread = true }
        switch result {
        case .success: return
        case .failure(.wouldBlock): throw .timedOut
        case .failure(.brokenPipe), .failure(.connectionReset): throw .connectionClosed
        case .failure(let e): throw .system(call: "send", errno: e)
        }
    }

    private func read(_ count: Int, into buffer: inout [UInt8]) throws(ClientError) {
        let start = buffer.count
        // Reserve once so that appending never reallocates and leaves a stale copy.
        buffer.reserveCapacity(start + count)
        buffer.append(contentsOf: repeatElement(0, count: count))
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(Errno) in
                try socket.readExactly(into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
            }
        }
        switch result {
        case .success(true):
            return
        case .success(false):
            throw .connectionClosed
        case .failure(.wouldBlock):
            throw .timedOut
        case .failure(.connectionReset):
            requestUnread = true
            throw .connectionClosed
        case .failure(let e):
            throw .system(call: "read", errno: e)
        }
    }
}

/// The replies to two requests sent in one write (``ArcadClient/send(_:then:)``): the
/// first's, and the second's or the error its read met. A concrete struct and enum, not a
/// tuple with a `Result`: their generic metadata a fresh login process (pam_arca.so) would
/// build at run time, by name, with a scan of every protocol conformance for
/// `ClientError: Error` (bench/pam/callgrind.sh).
public struct ReplyPair: Sendable, Equatable {
    /// The reply to the first request.
    public var first: Reply
    /// The reply to the second, or why there is none.
    public var second: Second

    /// What became of the second request.
    public enum Second: Sendable, Equatable {
        /// arcad's reply.
        case replied(Reply)
        /// The read of its reply failed (the first was answered).
        case failed(ClientError)
    }

    /// The two replies.
    public init(first: Reply, second: Second) {
        self.first = first
        self.second = second
    }
}
