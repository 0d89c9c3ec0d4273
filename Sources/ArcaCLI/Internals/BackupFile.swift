#if canImport(Glibc)
    import Glibc
#endif

/// Reading and writing a backup file as the user who runs `arca` (arcad never writes into a
/// user's directories). The only file of the CLI that calls `open`/`read`/`write`.
enum BackupFile {
    /// Why a backup file could not be read or written: the path and `strerror`.
    struct Failure: Error {
        let message: String
    }

    /// Writes `bytes` to a new file at `path`, mode 0600; an existing file is never replaced.
    /// The corresponding C functions are `open` (O_CREAT|O_EXCL), `write`, `fsync` and `close`.
    static func create(_ path: String, _ bytes: [UInt8]) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw failure(path) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { b in b.baseAddress.map { write(fd, $0 + done, b.count - done) } ?? 0 }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let error = failure(path)
                close(fd)
                unlink(path)
                throw error
            }
            done += n
        }
        guard fsync(fd) == 0 else {
            let error = failure(path)
            close(fd)
            unlink(path)
            throw error
        }
        close(fd)
    }

    /// The contents of `path`, at most `limit` bytes. The corresponding C functions are
    /// `open`, `read` and `close`.
    static func read(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(path) }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw failure(path) }
            if n == 0 { return out }
            out += chunk[0..<n]
            guard out.count <= limit else { throw Failure(message: "\(path): larger than \(limit) bytes") }
        }
    }

    private static func failure(_ path: String) -> Failure {
        Failure(message: "\(path): " + String(cString: strerror(errno)))
    }
}
