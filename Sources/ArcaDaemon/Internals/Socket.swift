import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call of arcad's: ArcaSystem's ``Errno`` with the call's name,
/// for the log.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    /// The failing call (`bind`, `accept`…).
    public let call: String
    /// The errno it left.
    public let errno: Errno
    public var description: String { "\(call): \(String(cString: strerror(errno.rawValue)))" }
}

/// The credentials of a socket peer, from `SO_PEERCRED` and `SO_PEERGROUPS`:
/// decided by the kernel when the peer connected, not by anything the client says.
public struct PeerCredentials: Equatable, Sendable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
    /// Groups given at init (tests, in-process callers); a socket peer's come from `socket`.
    private let givenGroups: [UInt32]
    /// The connection the peer is on, for what is read only when a request needs it
    /// (PeerSocket); nil outside a socket.
    var socket: PeerSocket?
    /// The peer's supplementary groups when it connected: the groups the process
    /// actually had, which may be fewer than the group database lists for its
    /// user (a process that dropped a group must not keep what the group grants).
    /// Read from the socket (`SO_PEERGROUPS`) the first time a request asks.
    public var groups: [UInt32] { socket?.groups ?? givenGroups }
    /// The peer's start time (`/proc/<pid>/stat`), read at accept only for a root peer
    /// on a kernel that may lack `SO_PEERPIDFD`, so that a session binds to the process
    /// that connected even if its pid is reused later; nil when not read.
    public var startTime: UInt64?
    /// The server's number for the connection the request came on (from 1), so that state
    /// kept between requests (a backup in chunks) belongs to one connection; 0 outside a socket.
    public var connection: UInt64 = 0
    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = [], startTime: UInt64? = nil) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.givenGroups = groups
        self.startTime = startTime
    }

    /// The primary group and the supplementary ones.
    public var allGroups: Set<UInt32> { Set(groups).union([gid]) }
    /// Root may act for any user.
    public var isRoot: Bool { uid == 0 }

    public static func == (a: PeerCredentials, b: PeerCredentials) -> Bool {
        a.pid == b.pid && a.uid == b.uid && a.gid == b.gid && a.startTime == b.startTime
            && a.connection == b.connection && a.socket === b.socket && a.givenGroups == b.givenGroups
    }
}

/// A point on the monotonic clock: the end of the time a request may take.
struct Deadline {
    private let nanoseconds: Int64

    /// `milliseconds` from now.
    static func after(milliseconds: Int) -> Deadline {
        Deadline(nanoseconds: now() + Int64(milliseconds) * 1_000_000)
    }

    private init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// Milliseconds left, rounded up; 0 once passed.
    var remainingMilliseconds: Int32 {
        let left = nanoseconds - Self.now()
        return left <= 0 ? 0 : Int32(clamping: (left + 999_999) / 1_000_000)
    }

    /// ArcaSystem's ``MonotonicClock``, in nanoseconds.
    private static func now() -> Int64 { MonotonicClock.nanoseconds() }
}

/// arcad's socket calls, over ArcaSystem's ``UnixSocket`` and ``FileDescriptor``
/// (which retry EINTR); this layer adds the call's name to the error and the
/// per-request deadline.
enum SocketSystem {
    /// Runs `body`, naming the call in the error it throws.
    @discardableResult
    static func named<T>(_ call: String, _ body: () throws(Errno) -> T) throws(SystemError) -> T {
        do { return try body() } catch { throw SystemError(call: call, errno: error) }
    }

    /// A listening Unix stream socket at `path`, mode `mode`; a stale socket file
    /// is replaced. The corresponding C functions are `socket`, `bind`, `listen`.
    static func listen(path: String, mode: mode_t, backlog: Int32 = 128) throws(SystemError) -> Int32 {
        try named("listen \(path)") { () throws(Errno) in
            try UnixSocket.listen(path: path, mode: mode, backlog: backlog).rawValue
        }
    }

    /// Accepts one connection, close-on-exec, and non-blocking if asked (then every
    /// wait on it goes through `poll` with the time a request has left), in the same
    /// call. The corresponding C function is `accept4(SOCK_CLOEXEC [| SOCK_NONBLOCK])`.
    static func accept(_ fd: Int32, nonBlocking: Bool) throws(SystemError) -> Int32 {
        try named("accept") { () throws(Errno) in
            try UnixSocket.accept(FileDescriptor(rawValue: fd), nonBlocking: nonBlocking).rawValue
        }
    }

    /// The peer's pid, uid and gid; its groups are read when a request needs them
    /// (PeerSocket). The corresponding C function is `getsockopt(SO_PEERCRED)`.
    static func peerCredentials(_ fd: Int32) throws(SystemError) -> PeerCredentials {
        let peer = try named("getsockopt(SO_PEERCRED)") { () throws(Errno) in
            try UnixSocket.peer(FileDescriptor(rawValue: fd))
        }
        return PeerCredentials(pid: peer.pid, uid: peer.uid, gid: peer.gid)
    }

    /// Sets receive and send timeouts. The corresponding C function is `setsockopt`.
    static func setTimeouts(_ fd: Int32, milliseconds: Int) throws(SystemError) {
        try named("setsockopt(SO_RCVTIMEO, SO_SNDTIMEO)") { () throws(Errno) in
            try UnixSocket.setTimeouts(FileDescriptor(rawValue: fd), milliseconds: milliseconds)
        }
    }

    /// Makes a listening socket blocking, so that `accept` waits (up to the receive
    /// timeout) instead of returning at once; true when it was non-blocking. The
    /// corresponding C function is `fcntl(F_GETFL, F_SETFL)`.
    static func setBlocking(_ fd: Int32) throws(SystemError) -> Bool {
        try named("fcntl(F_SETFL)") { () throws(Errno) in try FileDescriptor(rawValue: fd).setNonBlocking(false) }
    }

    /// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`); false when the
    /// deadline passes first. The corresponding C function is `poll`.
    static func wait(_ fd: Int32, for events: Int16, until deadline: Deadline) throws(SystemError) -> Bool {
        while true {
            let remaining = deadline.remainingMilliseconds
            guard remaining > 0 else { return false }
            let ready = try named("poll") { () throws(Errno) in
                try FileDescriptor(rawValue: fd).poll(for: events, milliseconds: remaining)
            }
            if ready { return true }
        }
    }

    /// Appends at most `limit` bytes from a non-blocking `fd` to `buffer`, however
    /// many the peer announced: memory follows what arrived, not what a header
    /// promised. Returns false when the peer closed or the deadline passed. When
    /// `buffer` must grow, its old storage is zeroed before it is freed (it may
    /// hold a secret). The corresponding C function is `read`.
    static func receive(_ fd: Int32, upTo limit: Int, appendingTo buffer: inout [UInt8], until deadline: Deadline)
        throws(SystemError) -> Bool
    {
        // Small reads for a client that trickles, larger ones once it has sent much.
        let chunk = min(limit, max(Self.receiveChunk, buffer.count))
        guard chunk > 0 else { return true }
        let start = buffer.count
        if buffer.capacity < start + chunk {
            var grown: [UInt8] = []
            grown.reserveCapacity(max(start + chunk, min(2 * buffer.capacity, start + limit)))
            grown.append(contentsOf: buffer)
            SecureWipe.zero(&buffer)
            buffer = grown
        }
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        var received = 0
        // Whatever happens, the buffer ends with exactly the bytes that arrived.
        defer { buffer.removeLast(chunk - received) }
        let socket = FileDescriptor(rawValue: fd)
        while true {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in
                    try socket.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
                }
            }
            switch result {
            case .success(let n):
                received = n
                return n > 0
            case .failure(.wouldBlock):
                guard try wait(fd, for: Int16(POLLIN), until: deadline) else { return false }
            case .failure(let e):
                throw SystemError(call: "read", errno: e)
            }
        }
    }

    /// Bytes read at once from a connection that has sent little so far.
    static let receiveChunk = 4096

    /// Writes all of `bytes` to a non-blocking `fd` before `deadline`; false if the
    /// peer does not take them in time. The corresponding C function is `send`
    /// (MSG_NOSIGNAL: a vanished client must not kill arcad with SIGPIPE).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, until deadline: Deadline) throws(SystemError)
        -> Bool
    {
        let socket = FileDescriptor(rawValue: fd)
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try UnixSocket.send(socket, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch .wouldBlock {
                guard try wait(fd, for: Int16(POLLOUT), until: deadline) else { return false }
            } catch {
                throw SystemError(call: "send", errno: error)
            }
        }
        return true
    }

    /// Writes all of `bytes`. The corresponding C function is `send` (MSG_NOSIGNAL:
    /// a vanished client must not kill arcad with SIGPIPE).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try named("send") { () throws(Errno) in try UnixSocket.sendAll(FileDescriptor(rawValue: fd), bytes) }
    }
}
