import ArcaSystem
import Glibc

/// Reads small procfs files without Foundation.
enum ProcFile {
    /// The file's text, or its first `limit` bytes at most (a seq_file makes only the
    /// pages that are read).
    static func read(_ path: String, limit: Int = .max) -> String? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            guard let n = try? chunk.withUnsafeMutableBytes({ buffer throws(Errno) in try fd.read(into: buffer) })
            else { return nil }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count >= limit { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
