#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A `sockaddr_un` for a filesystem path: the one place its bytes are filled.
struct SocketAddress {
    private var storage = sockaddr_un()

    /// The address of `path`; ``Errno/nameTooLong`` if it is empty or does not fit `sun_path`.
    static func unix(_ path: String) throws(Errno) -> SocketAddress {
        var address = SocketAddress()
        address.storage.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.storage.sun_path) else {
            throw .nameTooLong
        }
        withUnsafeMutableBytes(of: &address.storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return address
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    mutating func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
