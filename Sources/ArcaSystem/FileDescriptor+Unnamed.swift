import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Files written whole before anyone can see them: an unnamed file in the target's directory
/// (`O_TMPFILE`) is written, synced, then linked to its name, so a writer that dies or fails
/// midway leaves nothing behind, and a reader never sees half a file.
extension FileDescriptor {
    /// An unnamed file in `directory`, open for writing, with `permissions`.
    /// The corresponding C function is `open` with `O_TMPFILE`.
    public static func openUnnamed(in directory: String, permissions: mode_t = 0o600) throws(Errno)
        -> FileDescriptor
    {
        FileDescriptor(rawValue: try valueOrErrno { arca_open_unnamed(directory, permissions) }.get())
    }

    /// Names this unnamed file `path`; `EEXIST` if something is there already (never replaced).
    /// The corresponding C function is `linkat` (through `/proc/self/fd`).
    public func link(unnamedTo path: String) throws(Errno) {
        try nothingOrErrno { arca_link_unnamed(rawValue, path) }.get()
    }

    /// Flushes the file's data and metadata to disk. The corresponding C function is `fsync`.
    public func sync() throws(Errno) {
        try nothingOrErrno { fsync(rawValue) }.get()
    }
}
