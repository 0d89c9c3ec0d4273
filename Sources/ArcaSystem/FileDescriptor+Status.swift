import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Opening a file inside a directory already open, and what `fstat` says about it: for a
/// reader that must know who wrote a file before believing it (pam_arca's published KDF
/// parameters) without a race between the check and the read.
extension FileDescriptor {
    /// What `fstat` says about an open file, as much as ownership checks need.
    public struct Status: Sendable, Equatable {
        /// The owner's uid (`st_uid`).
        public var owner: UInt32
        /// Permission bits (`st_mode & 07777`).
        public var permissions: UInt32
        /// A directory (`S_IFDIR`).
        public var isDirectory: Bool
        /// A regular file (`S_IFREG`).
        public var isRegularFile: Bool
        /// Hard links to the file (`st_nlink`).
        public var linkCount: UInt64
        /// Size in bytes (`st_size`).
        public var size: Int
    }

    /// The status of the open file. The corresponding C function is `fstat`.
    public func status() throws(Errno) -> Status {
        var st = stat()
        try nothingOrErrno { fstat(rawValue, &st) }.get()
        let type = st.st_mode & S_IFMT
        return Status(
            owner: st.st_uid, permissions: st.st_mode & 0o7777, isDirectory: type == S_IFDIR,
            isRegularFile: type == S_IFREG, linkCount: UInt64(st.st_nlink), size: Int(st.st_size))
    }

    /// Opens `name` inside this open directory, close-on-exec; with `O_NOFOLLOW` in `flags`
    /// a symlink is refused (`ELOOP`). The corresponding C function is `openat`.
    public func open(_ name: String, _ flags: CInt, permissions: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        FileDescriptor(
            rawValue: try valueOrErrno { openat(rawValue, name, flags | O_CLOEXEC, permissions) }.get())
    }
}

/// The start time of a process: with its pid, it names one process, since a pid the kernel
/// reuses belongs to a process started later.
public enum ProcessStartTime {
    /// Field 22 of `/proc/PID/stat` (clock ticks after boot); nil when there is no such
    /// process, the file cannot be read or parsed, or (`ignoringZombies`) the process has
    /// exited and waits to be reaped. Parsed by hand, without `split` or `String`: a fresh
    /// login process pays for each generic type it instantiates.
    public static func of(pid: UInt32, ignoringZombies: Bool = false) -> UInt64? {
        guard let fd = try? FileDescriptor.open("/proc/\(pid)/stat", O_RDONLY) else { return nil }
        defer { fd.close() }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { (try? fd.read(into: $0)) ?? 0 }
        guard count > 0 else { return nil }
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields
        // start after the last ')'; field 3 (state) is the first after it.
        guard let close = bytes[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var field = 2
        var value: UInt64 = 0
        var inField = false
        for byte in bytes[(close + 1)..<count] {
            if byte == UInt8(ascii: " ") {
                if inField && field == 22 { return value }
                inField = false
                continue
            }
            if !inField {
                inField = true
                field += 1
                value = 0
            }
            if field == 3 && ignoringZombies && (byte == UInt8(ascii: "Z") || byte == UInt8(ascii: "X")) {
                return nil
            }
            if field == 22 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                value = times10 &+ UInt64(byte - UInt8(ascii: "0"))
            }
        }
        return nil
    }

    /// The start time of the calling process.
    public static var current: UInt64? { of(pid: UInt32(bitPattern: getpid())) }
}
