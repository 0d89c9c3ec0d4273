import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The file calls of the synced folder: atomic writes (temporary file, fsync, rename), reads
/// that never follow a symbolic link, 0700 directories, and directory listings.
enum FolderIO {
    /// Writes `bytes` to `path` atomically, mode 0600, through `temporary` (a name Syncthing
    /// never scans, so a half-written file is never replicated).
    static func writeAtomically(_ path: String, temporary: String, _ bytes: [UInt8]) throws(Errno) {
        _ = unlink(temporary)
        let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, permissions: 0o600)
        do throws(Errno) {
            try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try fd.writeAll(raw) } }.get()
            guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
        } catch {
            fd.close()
            _ = unlink(temporary)
            throw error
        }
        fd.close()
        guard rename(temporary, path) == 0 else {
            let error = Errno(rawValue: errno)
            _ = unlink(temporary)
            throw error
        }
        try syncDirectory(of: path)
    }

    /// Makes a rename into `path`'s directory durable (fsync of the directory), as arcad's
    /// own state files are: without it a crash can lose a record the agent reported written.
    private static func syncDirectory(of path: String) throws(Errno) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
        defer { fd.close() }
        guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
    }

    /// The whole file at `path` if it is a regular file of at most `limit` bytes (no symlinks).
    static func read(_ path: String, limit: Int) -> [UInt8]? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW) else { return nil }
        defer { fd.close() }
        guard let info = try? fd.status(), info.isRegularFile, info.size <= limit else { return nil }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let read = chunk.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try fd.read(into: raw) } }
            guard let n = try? read.get() else { return nil }
            if n == 0 { return result }
            result += chunk[..<n]
            if result.count > limit { return nil }
        }
    }

    /// Creates `path` (and its parents) as 0700 directories where missing.
    static func makeDirectories(_ path: String) throws(Errno) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0, errno != EEXIST { throw Errno(rawValue: errno) }
        }
    }

    /// The names in directory `path` (without . and ..), or [] when it cannot be read.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
