import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// TCP to 127.0.0.1 only: the agent talks to the user's own Syncthing over loopback and
/// nothing else (the address is never taken from anything but a port number).
enum LoopbackSocket {
    /// A connected stream socket to 127.0.0.1:`port`, reads and writes bounded by
    /// `timeoutMilliseconds`. The corresponding C functions are `socket`, `setsockopt` and `connect`.
    static func connect(port: UInt16, timeoutMilliseconds: Int) throws(Errno) -> FileDescriptor {
        let raw = try valueOrErrno { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            .get()
        let fd = FileDescriptor(rawValue: raw)
        do throws(Errno) {
            try UnixSocket.setTimeouts(fd, milliseconds: timeoutMilliseconds)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            try nothingOrErrno {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(raw, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }.get()
            return fd
        } catch {
            fd.close()
            throw error
        }
    }

    /// Sends all of `bytes` (never raising SIGPIPE).
    static func sendAll(_ fd: FileDescriptor, _ bytes: [UInt8]) throws(Errno) {
        try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try UnixSocket.sendAll(fd, raw) } }.get()
    }

    /// Everything until the peer closes, at most `limit` bytes.
    static func readToEnd(_ fd: FileDescriptor, limit: Int) throws(Errno) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = try chunk.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try fd.read(into: raw) } }
                .get()
            if n == 0 { return result }
            result += chunk[..<n]
            if result.count > limit { throw .messageTooLong }
        }
    }
}
