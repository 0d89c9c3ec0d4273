#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// TCP to 127.0.0.1 only (the sync agent talks to the user's own Syncthing): the address
/// is never taken from anything but a port number. Reads and writes on the socket are
/// ``UnixSocket``'s and ``FileDescriptor``'s, which work on any stream socket.
public enum LoopbackSocket {
    /// A connected, close-on-exec stream socket to 127.0.0.1:`port`. The connect, and reads
    /// and writes on the socket, fail with ``Errno/wouldBlock`` after `timeoutMilliseconds`.
    /// A signal during the connect never starts a second one while the first is still under
    /// way (`SocketConnect`).
    /// The corresponding C functions are `socket`, `setsockopt` and `connect`.
    public static func connect(port: UInt16, timeoutMilliseconds: Int) throws(Errno) -> FileDescriptor {
        var address = SocketAddress.loopback(port: port)
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        let fd = FileDescriptor(rawValue: try valueOrErrno { socket(AF_INET, type, 0) }.get())
        do throws(Errno) {
            try UnixSocket.setTimeouts(fd, milliseconds: timeoutMilliseconds)
            try SocketConnect.connect(fd, to: &address, timeoutMilliseconds: timeoutMilliseconds)
            return fd
        } catch {
            fd.close()
            throw error
        }
    }
}
