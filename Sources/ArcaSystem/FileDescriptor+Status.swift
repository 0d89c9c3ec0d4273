import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Opening a file inside a directory already open, and what `fstat` (or `lstat`) says about
/// it: for a reader that must know who wrote a file before believing it (pam_arca's published
/// KDF parameters) without a race between the check and the read.
extension FileDescriptor {
    /// What `fstat` or `lstat` says about a file, as much as ownership checks need.
    public struct Status: Sendable, Equatable {
        /// The owner's uid (`st_uid`).
        public var owner: UInt32
        /// Permission bits (`st_mode & 07777`).
        public var permissions: UInt32
        /// A directory (`S_IFDIR`).
        public var isDirectory: Bool
        /// A regular file (`S_IFREG`).
        public var isRegularFile: Bool
        /// A symbolic link (`S_IFLNK`): only ``status(path:)`` reports one (an open file is
        /// never a link without `O_PATH`, which nothing here uses).
        public var isSymbolicLink: Bool
        /// Hard links to the file (`st_nlink`).
        public var linkCount: UInt64
        /// Size in bytes (`st_size`).
        public var size: Int
        /// The device holding the file (`st_dev`): with ``inode``, which file it is.
        public var device: UInt64
        /// The file's inode number on its device (`st_ino`).
        public var inode: UInt64
    }

    /// The status of the open file. The corresponding C function is `fstat`.
    public func status() throws(Errno) -> Status {
        var st = stat()
        try nothingOrErrno { fstat(rawValue, &st) }.get()
        return Status(st)
    }

    /// The status of `path` itself: a final symlink is reported, not followed (with
    /// `followingLinks`, the file the links lead to); nil if nothing is there (`ENOENT`, also
    /// for a dangling link followed). Any other failure (`ENOTDIR`, `EACCES` …) is thrown. For
    /// a check before an open, prefer opening and ``status()``: nothing changes between the two.
    /// The corresponding C functions are `lstat` and `stat`.
    public static func status(path: String, followingLinks: Bool = false) throws(Errno) -> Status? {
        var st = stat()
        switch nothingOrErrno({ followingLinks ? stat(path, &st) : lstat(path, &st) }) {
        case .success: return Status(st)
        case .failure(.noSuchFileOrDirectory): return nil
        case .failure(let error): throw error
        }
    }

    /// Opens `name` inside this open directory, close-on-exec; with `O_NOFOLLOW` in `flags`
    /// a symlink is refused (`ELOOP`). The corresponding C function is `openat`.
    public func open(_ name: String, _ flags: CInt, permissions: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        FileDescriptor(
            rawValue: try valueOrErrno { arca_openat(rawValue, name, flags | O_CLOEXEC, permissions) }.get())
    }
}

extension FileDescriptor.Status {
    /// From a `stat` buffer.
    init(_ st: stat) {
        // <sys/stat.h>'s S_IFMT and the file types through CArcaSystem.h: Glibc's Swift overlay
        // spells them too, and linking it costs pam_arca.so's load (overlay.c).
        let type = st.st_mode & ARCA_S_IFMT
        self.init(
            owner: st.st_uid, permissions: st.st_mode & 0o7777, isDirectory: type == ARCA_S_IFDIR,
            isRegularFile: type == ARCA_S_IFREG, isSymbolicLink: type == ARCA_S_IFLNK, linkCount: UInt64(st.st_nlink),
            size: Int(st.st_size), device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }
}
