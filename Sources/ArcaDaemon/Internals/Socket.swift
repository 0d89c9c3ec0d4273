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

/// The credentials of a socket peer, from `SO_PEERCRED`: decided by the kernel,
/// not by anything the client says.
public struct PeerCredentials: Equatable, Sendable {
    public let pid: Int32
    public let uid: UInt32
    public let gid: UInt32
    /// The peer's start time (`/proc/<pid>/stat`) read at accept, so that a
    /// session binds to the process that connected even if its pid is reused
    /// later; nil when not read.
    public var startTime: UInt64?
    public init(pid: Int32, uid: UInt32, gid: UInt32, startTime: UInt64? = nil) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.startTime = startTime
    }
    /// Root may act for any user.
    public var isRoot: Bool { uid == 0 }
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

    /// The peer's pid, uid and gid. The corresponding C function is `getsockopt(SO_PEERCRED)`.
    static func peerCredentials(_ fd: Int32) throws -> PeerCredentials {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } — spelled out because
        // the Glibc module hides it behind _GNU_SOURCE.
        var cred = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        try retrying("getsockopt(SO_PEERCRED)") { getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) }
        guard length == 12 else { throw SystemError(call: "getsockopt(SO_PEERCRED)", errno: EINVAL) }
        return PeerCredentials(pid: cred.pid, uid: cred.uid, gid: cred.gid)
    }

    /// Sets receive and send timeouts. The corresponding C function is `setsockopt`.
    static func setTimeouts(_ fd: Int32, milliseconds: Int) throws {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        try retrying("setsockopt(SO_RCVTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, size) }
        try retrying("setsockopt(SO_SNDTIMEO)") { setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, size) }
    }

    /// Reads up to `buffer.count` bytes; 0 means the peer closed. The corresponding C function is `read`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes`. The corresponding C function is `send` (MSG_NOSIGNAL:
    /// a vanished client must not kill arcad with SIGPIPE).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try retrying("send") {
                send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
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
