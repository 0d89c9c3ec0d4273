import ArcaProtocol

#if canImport(Glibc)
import Glibc
#endif

/// An errno value from a failed system call, with the call's name.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    /// The failing call (`bind`, `accept`…).
    public let call: String
    /// The errno it left.
    public let errno: Int32
    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// The credentials of a socket peer, from `SO_PEERCRED` and `SO_PEERGROUPS`:
/// decided by the kernel when the peer connected, not by anything the client says.
public struct PeerCredentials: Equatable, Sendable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
    /// The peer's supplementary groups when it connected: the groups the process
    /// actually had, which may be fewer than the group database lists for its
    /// user (a process that dropped a group must not keep what the group grants).
    public let groups: [UInt32]
    /// The peer's start time (`/proc/<pid>/stat`) read at accept, so that a
    /// session binds to the process that connected even if its pid is reused
    /// later; nil when not read.
    public var startTime: UInt64?
    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = [], startTime: UInt64? = nil) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
        self.startTime = startTime
    }

    /// The primary group and the supplementary ones.
    public var allGroups: Set<UInt32> { Set(groups).union([gid]) }
    /// Root may act for any user.
    public var isRoot: Bool { uid == 0 }
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

    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`.
    private static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// Thin wrappers over the socket calls arcad makes. EINTR is retried in one place.
enum SocketSystem {
    @discardableResult
    static func retrying<T: BinaryInteger>(_ call: String, _ body: () -> T) throws -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let e = Glibc.errno
            if e == EINTR { continue }
            throw SystemError(call: call, errno: e)
        }
    }

    /// A listening Unix stream socket at `path`, mode `mode`; a stale socket file
    /// is replaced. The corresponding C functions are `socket`, `bind`, `listen`.
    static func listen(path: String, mode: mode_t, backlog: Int32 = 128) throws -> Int32 {
        let fd = try retrying("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            var address = try unixAddress(path)
            unlink(path)
            try retrying("bind") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            try retrying("chmod") { chmod(path, mode) }
            try retrying("listen") { Glibc.listen(fd, backlog) }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Connects to a Unix stream socket. The corresponding C function is `connect`.
    static func connect(path: String) throws -> Int32 {
        let fd = try retrying("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        var address = try unixAddress(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if rc < 0 {
            let e = errno
            close(fd)
            throw SystemError(call: "connect", errno: e)
        }
        return fd
    }

    /// Accepts one connection, close-on-exec. The corresponding C functions are
    /// `accept` and `fcntl` (`accept4` needs _GNU_SOURCE, which Glibc's module lacks;
    /// arcad never forks between the two calls).
    static func accept(_ fd: Int32) throws -> Int32 {
        let client = try retrying("accept") { Glibc.accept(fd, nil, nil) }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        return client
    }

    /// The peer's pid, uid, gid and supplementary groups. The corresponding C
    /// function is `getsockopt(SO_PEERCRED, SO_PEERGROUPS)`.
    static func peerCredentials(_ fd: Int32) throws -> PeerCredentials {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } — spelled out because
        // the Glibc module hides it behind _GNU_SOURCE.
        var cred = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        try retrying("getsockopt(SO_PEERCRED)") { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) }
        guard length == 12 else { throw SystemError(call: "getsockopt(SO_PEERCRED)", errno: EINVAL) }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid, groups: try peerGroups(fd))
    }

    /// `SO_PEERGROUPS` (Linux 4.13), missing from the Glibc module.
    private static let peerGroupsOption: Int32 = 59

    /// The supplementary groups the peer had at connect. The buffer grows once to
    /// the size the kernel asks for (ERANGE), up to NGROUPS_MAX (65536).
    private static func peerGroups(_ fd: Int32) throws -> [UInt32] {
        var groups = [gid_t](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
            let rc = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, peerGroupsOption, $0.baseAddress, &length) }
            if rc == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size)) }
            let e = errno
            if e == EINTR { continue }
            let needed = Int(length) / MemoryLayout<gid_t>.size
            guard e == ERANGE, needed > groups.count, needed <= 65_536 else {
                throw SystemError(call: "getsockopt(SO_PEERGROUPS)", errno: e)
            }
            groups = [gid_t](repeating: 0, count: needed)
        }
    }

    /// Sets receive and send timeouts. The corresponding C function is `setsockopt`.
    static func setTimeouts(_ fd: Int32, milliseconds: Int) throws {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        try retrying("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, size) }
        try retrying("setsockopt(SO_SNDTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, size) }
    }

    /// Makes `fd` non-blocking, so that every wait goes through `poll` with the
    /// time a request has left. The corresponding C function is `fcntl(F_SETFL)`.
    static func setNonBlocking(_ fd: Int32) throws {
        let flags = try retrying("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        try retrying("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Waits until `fd` is ready for `events` (`POLLIN`, `POLLOUT`); false when the
    /// deadline passes first. The corresponding C function is `poll`.
    static func wait(_ fd: Int32, for events: Int16, until deadline: Deadline) throws -> Bool {
        while true {
            let remaining = deadline.remainingMilliseconds
            guard remaining > 0 else { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let n = poll(&entry, 1, remaining)
            if n > 0 { return true }  // ready, or an error/hang-up the next call reports
            if n < 0 && errno != EINTR { throw SystemError(call: "poll", errno: errno) }
        }
    }

    /// Appends at most `limit` bytes from a non-blocking `fd` to `buffer`, however
    /// many the peer announced: memory follows what arrived, not what a header
    /// promised. Returns false when the peer closed or the deadline passed. When
    /// `buffer` must grow, its old storage is zeroed before it is freed (it may
    /// hold a secret). The corresponding C function is `read`.
    static func receive(_ fd: Int32, upTo limit: Int, appendingTo buffer: inout [UInt8], until deadline: Deadline)
        throws -> Bool
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
        while true {
            let n = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress.map { $0 + start }, chunk)
            }
            if n >= 0 {
                received = n
                return n > 0
            }
            let e = errno
            if e == EINTR { continue }
            guard e == EAGAIN || e == EWOULDBLOCK else { throw SystemError(call: "read", errno: e) }
            guard try wait(fd, for: Int16(POLLIN), until: deadline) else { return false }
        }
    }

    /// Bytes read at once from a connection that has sent little so far.
    static let receiveChunk = 4096

    /// Writes all of `bytes` to a non-blocking `fd` before `deadline`; false if the
    /// peer does not take them in time. The corresponding C function is `send`
    /// (MSG_NOSIGNAL: a vanished client must not kill arcad with SIGPIPE).
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, until deadline: Deadline) throws -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n >= 0 {
                offset += n
                continue
            }
            let e = errno
            if e == EINTR { continue }
            guard e == EAGAIN || e == EWOULDBLOCK else { throw SystemError(call: "send", errno: e) }
            guard try wait(fd, for: Int16(POLLOUT), until: deadline) else { return false }
        }
        return true
    }

    /// Writes all of `bytes`. The corresponding C function is `send` (MSG_NOSIGNAL:
    /// a vanished client must not kill arcad with SIGPIPE).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try retrying("send") {
                Glibc.send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            offset += n
        }
    }

    private static func unixAddress(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { throw SystemError(call: "socket path", errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }
}
