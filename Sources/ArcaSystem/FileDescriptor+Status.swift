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
        // <sys/stat.h>'s S_IFMT, S_IFDIR and S_IFREG through CArcaSystem.h: Glibc's Swift overlay
        // spells them too, and linking it costs pam_arca.so's load (overlay.c).
        let type = st.st_mode & ARCA_S_IFMT
        return Status(
            owner: st.st_uid, permissions: st.st_mode & 0o7777, isDirectory: type == ARCA_S_IFDIR,
            isRegularFile: type == ARCA_S_IFREG, linkCount: UInt64(st.st_nlink), size: Int(st.st_size))
    }

    /// Opens `name` inside this open directory, close-on-exec; with `O_NOFOLLOW` in `flags`
    /// a symlink is refused (`ELOOP`). The corresponding C function is `openat`.
    public func open(_ name: String, _ flags: CInt, permissions: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        FileDescriptor(
            rawValue: try valueOrErrno { arca_openat(rawValue, name, flags | O_CLOEXEC, permissions) }.get())
    }
}
