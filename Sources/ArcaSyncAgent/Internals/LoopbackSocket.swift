import ArcaSystem

/// The agent's reads and writes on ArcaSystem's loopback socket (the user's own Syncthing).
extension LoopbackSocket {
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
