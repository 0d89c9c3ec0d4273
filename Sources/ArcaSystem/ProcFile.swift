import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Small kernel-made text files (`/proc/PID/cgroup`): read whole with `open`, `read`
/// until end of file, `close`; no stdio, no `fstat`, no terminal probing.
public enum ProcFile {
    /// The bytes of `path`, or nil when it cannot be opened or read, or is longer than
    /// `limit` bytes. The corresponding C functions are `open`, `read` and `close`.
    public static func contents(of path: String, limit: Int = 65_536) -> [UInt8]? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        var bytes = [UInt8](repeating: 0, count: min(4096, limit))
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count < limit else { return nil }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit - bytes.count)))
            }
            let read = bytes.withUnsafeMutableBytes { raw in
                try? fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count...]))
            }
            guard let read else { return nil }
            if read == 0 { return Array(bytes[..<count]) }
            count += read
        }
    }
}

/// The type of the file system mounted at a path (`f_type`: `CGROUP2_SUPER_MAGIC`…).
public enum FileSystemType {
    /// `CGROUP2_SUPER_MAGIC`.
    public static let cgroup2 = 0x6367_7270
    /// `TMPFS_MAGIC`.
    public static let tmpfs = 0x0102_1994
    /// `CGROUP_SUPER_MAGIC` (a cgroup v1 hierarchy).
    public static let cgroup1 = 0x0027_e0eb

    /// `f_type` of the file system holding `path`, or nil when it cannot be read.
    /// The corresponding C function is `statfs`.
    public static func of(_ path: String) -> Int? {
        guard case .success(let type) = valueOrErrno({ arca_filesystem_type(path) }) else { return nil }
        return type
    }
}
