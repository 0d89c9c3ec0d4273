import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The credentials the kernel recorded for a Unix socket's peer when it
/// connected (`SO_PEERCRED`): nothing the peer says.
public struct SocketPeer: Equatable, Sendable {
    /// The peer's process id.
    public var pid: Int32
    /// The peer's effective uid.
    public var uid: UInt32
    /// The peer's effective gid.
    public var gid: UInt32

    /// The three ids.
    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// Unix stream sockets: the calls arcad, its clients and the PAM module make on
/// them. Every descriptor is close-on-exec; sends never raise `SIGPIPE`.
public enum UnixSocket {
    /// A connected stream socket to `path`. With `timeoutMilliseconds`, the connect,
    /// and reads and writes on the socket, fail with ``Errno/wouldBlock`` after that long
    /// (the socket stays blocking), signals included; 0 means no timeout. A signal during the
    /// connect never starts a second one while the first is still under way (Linux drops an
    /// interrupted Unix connect, which is then made again: `SocketConnect`).
    /// The corresponding C functions are `socket`, `setsockopt` and `connect`.
    public static func connect(path: String, timeoutMilliseconds: Int? = nil) throws(Errno) -> FileDescriptor {
        var address = try SocketAddress.unix(path)
        let fd = try stream()
        do throws(Errno) {
            if let timeoutMilliseconds { try setTimeouts(fd, milliseconds: timeoutMilliseconds) }
            try SocketConnect.connect(fd, to: &address, timeoutMilliseconds: timeoutMilliseconds)
            return fd
        } catch {
            fd.close()
            throw error
        }
    }

    /// A listening socket at `path`, mode `mode`; a stale socket file is replaced.
    /// The corresponding C functions are `socket`, `bind`, `chmod` and `listen`.
    public static func listen(path: String, mode: mode_t, backlog: Int32 = 128) throws(Errno) -> FileDescriptor {
        var address = try SocketAddress.unix(path)
        let fd = try stream()
        do throws(Errno) {
            unlink(path)
            try nothingOrErrno { address.withSockaddr { bind(fd.rawValue, $0, $1) } }.get()
            try nothingOrErrno { chmod(path, mode) }.get()
            try nothingOrErrno { Glibc.listen(fd.rawValue, backlog) }.get()
            return fd
        } catch {
            fd.close()
            throw error
        }
    }

    /// Accepts one connection, close-on-exec (and non-blocking if asked) in the same call.
    /// The corresponding C function is `accept4(SOCK_CLOEXEC [| SOCK_NONBLOCK])`.
    public static func accept(_ listener: FileDescriptor, nonBlocking: Bool = false) throws(Errno)
        -> FileDescriptor
    {
        FileDescriptor(rawValue: try valueOrErrno { arca_accept_cloexec(listener.rawValue, nonBlocking ? 1 : 0) }.get())
    }

    /// A pidfd for the process that connected (close-on-exec; the caller closes it): the
    /// kernel recorded that process at connect time, so the pidfd never names a later
    /// process that reused its pid. ``Errno/noProtocolOption`` on a kernel before 6.5.
    /// The corresponding C function is `getsockopt(SO_PEERPIDFD)`.
    public static func peerProcess(_ fd: FileDescriptor) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try valueOrErrno { arca_peer_pidfd(fd.rawValue) }.get())
    }

    /// The peer's pid, uid and gid. The corresponding C function is `getsockopt(SO_PEERCRED)`.
    public static func peer(_ fd: FileDescriptor) throws(Errno) -> SocketPeer {
        var credentials = arca_ucred()
        try nothingOrErrno { arca_peer_credentials(fd.rawValue, &credentials) }.get()
        return SocketPeer(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }

    /// The supplementary groups the peer had when it connected. The buffer grows
    /// once to the size the kernel asks for (`ERANGE`), up to `NGROUPS_MAX` (65536).
    /// The corresponding C function is `getsockopt(SO_PEERGROUPS)` (Linux 4.13).
    public static func peerGroups(_ fd: FileDescriptor) throws(Errno) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var count = groups.count
            let result = nothingOrErrno {
                groups.withUnsafeMutableBufferPointer { arca_peer_groups(fd.rawValue, $0.baseAddress, &count) }
            }
            switch result {
            case .success: return Array(groups.prefix(count))
            case .failure(.outOfRange) where count > groups.count && count <= 65_536:
                groups = [UInt32](repeating: 0, count: count)
            case .failure(let e): throw e
            }
        }
    }

    /// Sets the receive and send timeouts; 0 means none (the kernel's reading).
    /// A negative value is ``Errno/invalidArgument``. The corresponding C function is `setsockopt`.
    public static func setTimeouts(_ fd: FileDescriptor, milliseconds: Int) throws(Errno) {
        guard milliseconds >= 0 else { throw .invalidArgument }
        var tv = timeval(milliseconds: milliseconds)
        let size = socklen_t(MemoryLayout<timeval>.size)
        try nothingOrErrno { setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVTIMEO, &tv, size) }.get()
        try nothingOrErrno { setsockopt(fd.rawValue, SOL_SOCKET, SO_SNDTIMEO, &tv, size) }.get()
    }

    /// Sends at most `bytes.count` bytes. The corresponding C function is
    /// `send(MSG_NOSIGNAL)`: a vanished peer must not kill the caller with `SIGPIPE`.
    public static func send(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try valueOrErrno { Glibc.send(fd.rawValue, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL)) }.get()
    }

    /// Sends all of `bytes`, blocking (up to the socket's timeout per call). The
    /// corresponding C function is `send(MSG_NOSIGNAL)`.
    public static func sendAll(_ fd: FileDescriptor, _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try send(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }

    /// `milliseconds` (at least 0) as a `timeval`, for `SO_RCVTIMEO` and `SO_SNDTIMEO`.
    static func timeval(milliseconds: Int) -> Glibc.timeval {
        Glibc.timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
    }

    /// The bytes of the peer's `sun_path` (an abstract name starts with NUL); empty
    /// for an unnamed peer. The corresponding C function is `getpeername`.
    public static func peerAddress(_ fd: FileDescriptor) throws(Errno) -> [UInt8] {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        try nothingOrErrno {
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd.rawValue, $0, &length) }
            }
        }.get()
        let pathOffset = MemoryLayout<sa_family_t>.size
        guard Int(length) > pathOffset else { return [] }
        return withUnsafeBytes(of: &address.sun_path) { Array($0.prefix(Int(length) - pathOffset)) }
    }

    /// A new close-on-exec stream socket. The corresponding C function is `socket`.
    private static func stream() throws(Errno) -> FileDescriptor {
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        return FileDescriptor(rawValue: try valueOrErrno { socket(AF_UNIX, type, 0) }.get())
    }
}
