import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Thin wrappers over the file calls of arcad's state directory, over
/// ArcaSystem's ``FileDescriptor`` (which retries EINTR and finishes short reads
/// and writes); errors name the call.
enum FileSystem {
    /// Opens `path` without following a final symlink (`O_NOFOLLOW`), close-on-exec.
    /// The corresponding C function is `open`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(SystemError) -> Int32 {
        try SocketSystem.named("open \(path)") { () throws(Errno) in
            try FileDescriptor.open(path, flags | O_NOFOLLOW, permissions: mode).rawValue
        }
    }

    /// The status of an open file: ArcaSystem's ``FileDescriptor/status()``, with the call
    /// named in its error. The corresponding C function is `fstat`.
    static func status(_ fd: Int32) throws(SystemError) -> FileDescriptor.Status {
        try SocketSystem.named("fstat") { () throws(Errno) in try FileDescriptor(rawValue: fd).status() }
    }

    /// The status of `path` itself (a symlink is reported, not followed); nil if it does not
    /// exist: ArcaSystem's ``FileDescriptor/status(path:)``, with the call named in its error.
    /// The corresponding C function is `lstat`.
    static func status(path: String) throws(SystemError) -> FileDescriptor.Status? {
        try SocketSystem.named("lstat \(path)") { () throws(Errno) in try FileDescriptor.status(path: path) }
    }

    /// Sets the permission bits of an open file. The corresponding C function is `fchmod`.
    static func setPermissions(_ fd: Int32, _ mode: mode_t) throws(SystemError) {
        try SocketSystem.named("fchmod") { () throws(Errno) in try nothingOrErrno { fchmod(fd, mode) }.get() }
    }

    /// Takes an exclusive `flock` without waiting: false if another open file
    /// description holds it. The corresponding C function is `flock`.
    static func tryLockExclusive(_ fd: Int32) throws(SystemError) -> Bool {
        switch nothingOrErrno({ flock(fd, LOCK_EX | LOCK_NB) }) {
        case .success: return true
        case .failure(.wouldBlock): return false
        case .failure(let e): throw SystemError(call: "flock", errno: e)
        }
    }

    /// Replaces the whole content of `fd` with `bytes`. The corresponding C
    /// functions are `ftruncate` and `pwrite`.
    static func replaceContent(_ fd: Int32, with bytes: [UInt8]) throws(SystemError) {
        try SocketSystem.named("ftruncate") { () throws(Errno) in try nothingOrErrno { ftruncate(fd, 0) }.get() }
        try SocketSystem.named("pwrite") { () throws(Errno) in
            try bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) in try FileDescriptor(rawValue: fd).writeAll(toAbsoluteOffset: 0, raw) }
            }.get()
        }
    }

    /// Cuts (or extends) `fd` to `length` bytes. The corresponding C function is `ftruncate`.
    static func truncate(_ fd: Int32, to length: Int) throws(SystemError) {
        try SocketSystem.named("ftruncate") { () throws(Errno) in
            try nothingOrErrno { ftruncate(fd, off_t(length)) }.get()
        }
    }

    /// Up to `limit` bytes of `fd` from `offset` (the start unless given). The corresponding C
    /// function is `pread`.
    static func readPrefix(_ fd: Int32, limit: Int, from offset: Int = 0) throws(SystemError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = try SocketSystem.named("pread") { () throws(Errno) in
            try bytes.withUnsafeMutableBytes { raw in
                Result { () throws(Errno) in
                    try FileDescriptor(rawValue: fd).read(fromAbsoluteOffset: offset, into: raw)
                }
            }.get()
        }
        return Array(bytes.prefix(n))
    }

    /// Writes all of `bytes` (a secret: the caller's buffer, never copied). The
    /// corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try SocketSystem.named("write") { () throws(Errno) in try FileDescriptor(rawValue: fd).writeAll(bytes) }
    }

    /// Fills `buffer` exactly from `fd`; false at an early end of file. The
    /// corresponding C function is `read`.
    static func readExactly(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Bool {
        try SocketSystem.named("read") { () throws(Errno) in
            try FileDescriptor(rawValue: fd).readExactly(into: buffer)
        }
    }

    /// Flushes a file to disk. The corresponding C function is `fsync`.
    static func sync(_ fd: Int32) throws(SystemError) {
        try SocketSystem.named("fsync") { () throws(Errno) in try nothingOrErrno { fsync(fd) }.get() }
    }

    /// Flushes a directory's entries (a rename in it) to disk. The corresponding C
    /// functions are `open(O_DIRECTORY)` and `fsync`.
    static func syncDirectory(_ path: String) throws(SystemError) {
        try syncFile(path, flags: O_RDONLY | O_DIRECTORY)
    }

    /// Flushes the file at `path` to disk. The corresponding C functions are `open` and `fsync`.
    static func syncFile(_ path: String, flags: Int32 = O_RDONLY) throws(SystemError) {
        let fd = try open(path, flags)
        defer { close(fd) }
        try sync(fd)
    }

    /// Renames `from` to `to`, replacing `to`. The corresponding C function is `rename`.
    static func rename(_ from: String, _ to: String) throws(SystemError) {
        try SocketSystem.named("rename \(from)") { () throws(Errno) in
            try nothingOrErrno { Glibc.rename(from, to) }.get()
        }
    }

    /// Removes `path` if it exists. The corresponding C function is `unlink`.
    static func removeIfPresent(_ path: String) throws(SystemError) {
        switch nothingOrErrno({ unlink(path) }) {
        case .success, .failure(.noSuchFileOrDirectory): return
        case .failure(let e): throw SystemError(call: "unlink \(path)", errno: e)
        }
    }
}
