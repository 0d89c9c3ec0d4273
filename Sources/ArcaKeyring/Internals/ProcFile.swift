import Glibc

/// Reads small procfs files without Foundation.
enum ProcFile {
    /// The file's text, or its first `limit` bytes at most (a seq_file makes only the
    /// pages that are read).
    static func read(_ path: String, limit: Int = .max) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count >= limit { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
