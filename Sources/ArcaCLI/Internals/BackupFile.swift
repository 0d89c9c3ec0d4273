import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Reading and writing a backup file as the user who runs `arca` (arcad never opens a path a
/// user names), a chunk at a time. The only file of the CLI that calls `open`/`read`/`write`.
enum BackupFile {
    /// Why a backup file could not be read or written: the path and `strerror`.
    struct Failure: Error {
        let message: String
    }

    /// `strerror`'s words for `error`, as every other file error of the CLI reads.
    static func text(_ error: Errno) -> String { String(cString: strerror(error.rawValue)) }

    /// A new backup file that appears at its path only once whole: written unnamed in the
    /// target's directory (`O_TMPFILE`), synced, then linked to its name, which is never
    /// replaced. An export that fails or is killed midway leaves no file at all. Where the file
    /// system has no `O_TMPFILE`, a hidden `.NAME.partial` (0600, removed on failure) stands in.
    final class Writer {
        let path: String
        private let fd: FileDescriptor
        /// The stand-in's path when the file system has no unnamed files.
        private let partial: String?
        private var done = false

        /// Refuses at once a path that exists (the backup would not be written anyway).
        init(path: String) throws(Failure) {
            self.path = path
            // Something there (a symlink too, never followed): refused. A path lstat cannot
            // read is left to the create below, which fails with the reason.
            if case .some(.some) = try? FileDescriptor.status(path: path) {
                throw Failure(message: "\(path): " + BackupFile.text(.exists))
            }
            let directory = Self.directory(of: path)
            do {
                fd = try FileDescriptor.openUnnamed(in: directory)
                partial = nil
            } catch let error where error == .notSupported || error == Errno(rawValue: EISDIR) {
                let name = path.split(separator: "/").last.map(String.init) ?? path
                let stand = (directory == "." ? "" : directory + "/") + "." + name + ".partial"
                do { fd = try FileDescriptor.open(stand, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW) } catch {
                    throw Failure(message: "\(stand): " + BackupFile.text(error))
                }
                partial = stand
            } catch {
                throw Failure(message: "\(path): " + BackupFile.text(error))
            }
        }

        deinit {
            fd.close()
            if !done, let partial { unlink(partial) }
        }

        /// Appends `bytes`.
        func append(_ bytes: [UInt8]) throws(Failure) {
            let written = bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try fd.writeAll(raw) } }
            if case .failure(let error) = written { throw Failure(message: "\(path): " + BackupFile.text(error)) }
        }

        /// Syncs the file and gives it its name. The corresponding C functions are `fsync` and
        /// `linkat` (or `link` and `unlink` for the stand-in).
        func commit() throws(Failure) {
            do {
                try fd.sync()
                if let partial {
                    try nothingOrErrno { link(partial, path) }.get()
                    unlink(partial)
                } else {
                    try fd.link(unnamedTo: path)
                }
            } catch {
                throw Failure(message: "\(path): " + BackupFile.text(error))
            }
            done = true
            // The new name itself is durable once its directory is synced.
            if let directory = try? FileDescriptor.open(Self.directory(of: path), O_RDONLY | O_DIRECTORY) {
                try? directory.sync()
                directory.close()
            }
        }

        private static func directory(of path: String) -> String {
            guard let slash = path.lastIndex(of: "/") else { return "." }
            return slash == path.startIndex ? "/" : String(path[..<slash])
        }
    }

    /// A backup file read a chunk at a time.
    final class Reader {
        let path: String
        /// The file's length when opened.
        let length: UInt64
        private let fd: FileDescriptor

        init(path: String) throws(Failure) {
            self.path = path
            do { fd = try FileDescriptor.open(path, O_RDONLY) } catch {
                throw Failure(message: "\(path): " + BackupFile.text(error))
            }
            guard let status = try? fd.status(), status.isRegularFile else {
                fd.close()
                throw Failure(message: "\(path): not a regular file")
            }
            length = UInt64(status.size)
        }

        deinit { fd.close() }

        /// Up to `count` bytes from `offset`; fewer only at the end of the file.
        func read(at offset: UInt64, count: Int) throws(Failure) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let got = out.withUnsafeMutableBytes { raw in
                    Result { () throws(Errno) in
                        try fd.read(
                            fromAbsoluteOffset: Int(offset) + filled,
                            into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]))
                    }
                }
                let n: Int
                switch got {
                case .success(let count): n = count
                case .failure(let error): throw Failure(message: "\(path): " + BackupFile.text(error))
                }
                if n == 0 { break }
                filled += n
            }
            out.removeLast(count - filled)
            return out
        }
    }
}
