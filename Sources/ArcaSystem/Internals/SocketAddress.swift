#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A socket address (a `sockaddr_un` for a filesystem path, or a `sockaddr_in` for
/// 127.0.0.1): the one place their bytes are filled.
struct SocketAddress {
    private var storage = sockaddr_storage()
    private var length: socklen_t = 0

    /// The address of `path`; ``Errno/nameTooLong`` if it is empty or does not fit `sun_path`.
    static func unix(_ path: String) throws(Errno) -> SocketAddress {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .nameTooLong
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return SocketAddress(address)
    }

    /// 127.0.0.1:`port`.
    static func loopback(port: UInt16) -> SocketAddress {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return SocketAddress(address)
    }

    private init<Address>(_ address: Address) {
        withUnsafeMutableBytes(of: &storage) { storage in
            withUnsafeBytes(of: address) { storage.copyMemory(from: $0) }
        }
        length = socklen_t(MemoryLayout<Address>.size)
    }

    /// Calls `body` with the address as a `sockaddr` pointer and its length.
    mutating func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        let length = length
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
