#if canImport(Glibc)
import Glibc
#endif

/// What `fstat`/`lstat` say about a file, as much as arcad's checks need.
struct FileStatus: Equatable {
    let owner: UInt32
    /// Permission bits (`st_mode & 07777`).
    let permissions: UInt32
    let isDirectory: Bool
    let isRegularFile: Bool
    let isSymbolicLink: Bool
    let size: Int

    init(_ st: stat) {
        owner = st.st_uid
        permissions = st.st_mode & 0o7777
        let type = st.st_mode & S_IFMT
        isDirectory = type == S_IFDIR
        isRegularFile = type == S_IFREG
        isSymbolicLink = type == S_IFLNK
        size = Int(st.st_size)
    }
}

/// Thin wrappers over the file calls of arcad's state directory. EINTR is
/// retried by `SocketSystem.retrying`, the one retry helper.
enum FileSystem {
    /// Opens `path` without following a final symlink (`O_NOFOLLOW`), close-on-exec.
    /// The corresponding C function is `open`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws -> Int32 {
        try SocketSystem.retrying("open \(path)") { Glibc.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
    }

    /// The status of an open file. The corresponding C function is `fstat`.
    static func status(_ fd: Int32) throws -> FileStatus {
        var st = stat()
        try SocketSystem.retrying("fstat") { fstat(fd, &st) }
        return FileStatus(st)
    }

    /// The status of `path` itself (a symlink is reported, not followed); nil if it
    /// does not exist. The corresponding C function is `lstat`.
    static func status(path: String) throws -> FileStatus? {
        var st = stat()
        if lstat(path, &st) == 0 { return FileStatus(st) }
        if errno == ENOENT { return nil }
        throw SystemError(call: "lstat \(path)", errno: errno)
    }

    /// Sets the permission bits of an open file. The corresponding C function is `fchmod`.
    static func setPermissions(_ fd: Int32, _ mode: mode_t) throws {
        try SocketSystem.retrying("fchmod") { fchmod(fd, mode) }
    }

    /// Takes an exclusive `flock` without waiting: false if another open file
    /// description holds it. The corresponding C function is `flock`.
    static func tryLockExclusive(_ fd: Int32) throws -> Bool {
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw SystemError(call: "flock", errno: errno)
        }
        return true
    }

    /// Replaces the whole content of `fd` with `bytes`. The corresponding C
    /// functions are `ftruncate` and `pwrite`.
    static func replaceContent(_ fd: Int32, with bytes: [UInt8]) throws {
        try SocketSystem.retrying("ftruncate") { ftruncate(fd, 0) }
        let written = try bytes.withUnsafeBytes { raw in
            try SocketSystem.retrying("pwrite") { pwrite(fd, raw.baseAddress, raw.count, 0) }
        }
        guard written == bytes.count else { throw SystemError(call: "pwrite", errno: EIO) }
    }

    /// Up to `limit` bytes from the start of `fd`. The corresponding C function is `pread`.
    static func readPrefix(_ fd: Int32, limit: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = try bytes.withUnsafeMutableBytes { raw in
            try SocketSystem.retrying("pread") { pread(fd, raw.baseAddress, raw.count, 0) }
        }
        return Array(bytes.prefix(n))
    }

    /// Writes all of `bytes` (a secret: the caller's buffer, never copied). The
    /// corresponding C function is `write`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try SocketSystem.retrying("write") {
                write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
        }
    }

    /// Fills `buffer` exactly from `fd`; false at an early end of file. The
    /// corresponding C function is `read`.
    static func readExactly(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Bool {
        var offset = 0
        while offset < buffer.count {
            let n = try SocketSystem.retrying("read") {
                read(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if n == 0 { return false }
            offset += n
        }
        return true
    }

    /// Flushes a file to disk. The corresponding C function is `fsync`.
    static func sync(_ fd: Int32) throws {
        try SocketSystem.retrying("fsync") { fsync(fd) }
    }

    /// Flushes a directory's entries (a rename in it) to disk. The corresponding C
    /// functions are `open(O_DIRECTORY)` and `fsync`.
    static func syncDirectory(_ path: String) throws {
        try syncFile(path, flags: O_RDONLY | O_DIRECTORY)
    }

    /// Flushes the file at `path` to disk. The corresponding C functions are `open` and `fsync`.
    static func syncFile(_ path: String, flags: Int32 = O_RDONLY) throws {
        let fd = try open(path, flags)
        defer { close(fd) }
        try sync(fd)
    }

    /// Renames `from` to `to`, replacing `to`. The corresponding C function is `rename`.
    static func rename(_ from: String, _ to: String) throws {
        try SocketSystem.retrying("rename \(from)") { Glibc.rename(from, to) }
    }

    /// Removes `path` if it exists. The corresponding C function is `unlink`.
    static func removeIfPresent(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw SystemError(call: "unlink \(path)", errno: errno) }
    }
}
