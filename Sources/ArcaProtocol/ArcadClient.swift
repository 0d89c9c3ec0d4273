#if canImport(Glibc)
import Glibc
#endif

/// Why a request to arcad did not get a reply.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens at the socket path (ENOENT, ECONNREFUSED…): arcad is not running.
    case notRunning(path: String, errno: Int32)
    /// arcad did not answer within the timeout.
    case timedOut
    /// The connection closed before a whole reply arrived.
    case connectionClosed
    /// The reply was malformed.
    case malformedReply(ProtocolError)
    /// The request could not be encoded (a field over its limit).
    case invalidRequest(ProtocolError)
    /// Another system call failed.
    case system(call: String, errno: Int32)

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
        case .notRunning(let path, let e): "arcad is not running (\(path): \(String(cString: strerror(e))))"
        case .timedOut: "arcad did not answer in time"
        case .connectionClosed: "arcad closed the connection"
        case .malformedReply(let e): "malformed reply from arcad: \(e)"
        case .invalidRequest(let e): "invalid request: \(e)"
        case .system(let call, let e): "\(call): \(String(cString: strerror(e)))"
        }
    }
}

/// A blocking connection to arcad, for the PAM module, the CLI and the library.
///
/// No Foundation, no threads: every call is a plain syscall bounded by
/// `SO_RCVTIMEO`/`SO_SNDTIMEO`, so a dead or stuck daemon costs a caller at most
/// the timeout (the PAM module must never hang a login). Frames that carried
/// secrets are zeroed after use.
public final class ArcadClient {
    /// The default socket (``ArcadSocket/defaultPath``).
    public static let defaultSocketPath = ArcadSocket.defaultPath

    /// `ARCA_SOCKET` if set and non-empty, else the default.
    public static var environmentSocketPath: String {
        if let value = getenv("ARCA_SOCKET"), value.pointee != 0 { return String(cString: value) }
        return defaultSocketPath
    }

    private let fd: Int32
    private var nextRequestID: UInt32 = 1
    /// The socket path this client is connected to.
    public let path: String

    /// Connects, with send/receive timeouts of `timeoutMilliseconds`.
    public init(path: String = ArcadClient.environmentSocketPath, timeoutMilliseconds: Int = 5_000) throws(ClientError) {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        var tv = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, size)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, size)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .notRunning(path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var rc: Int32
        repeat {
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } while rc < 0 && errno == EINTR
        if rc < 0 {
            let e = errno
            close(fd)
            if e == EAGAIN || e == EINPROGRESS { throw .timedOut }
            throw .notRunning(path: path, errno: e)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one request and waits for its reply. The request's secrets are not
    /// wiped here (the caller owns the value); the frame buffers are.
    public func send(_ request: Request) throws(ClientError) -> Reply {
        let id = nextRequestID
        nextRequestID &+= 1
        var frame: [UInt8]
        do {
            frame = try Frame.encode(request, requestID: id)
        } catch {
            throw .invalidRequest(error)
        }
        defer { SecureWipe.zero(&frame) }
        try writeAll(frame)
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
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { throw .timedOut }
                if errno == EPIPE || errno == ECONNRESET { throw .connectionClosed }
                throw .system(call: "send", errno: errno)
            }
            offset += n
        }
    }

    private func read(_ count: Int, into buffer: inout [UInt8]) throws(ClientError) {
        let start = buffer.count
        // Reserve once so that appending never reallocates and leaves a stale copy.
        buffer.reserveCapacity(start + count)
        buffer.append(contentsOf: repeatElement(0, count: count))
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress.map { $0 + start + filled }, count - filled)
            }
            if n < 0 {
                if errno == EINTR { continue }
                buffer.removeLast(count - filled)
                if errno == EAGAIN { throw .timedOut }
                if errno == ECONNRESET { throw .connectionClosed }
                throw .system(call: "read", errno: errno)
            }
            if n == 0 {
                buffer.removeLast(count - filled)
                throw .connectionClosed
            }
            filled += n
        }
    }
}
