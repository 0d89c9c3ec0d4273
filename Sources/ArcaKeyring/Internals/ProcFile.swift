import ArcaSystem
import Glibc

/// Reads small procfs files without Foundation.
enum ProcFile {
    /// The file's text, or its first `limit` bytes at most: no read asks for more, and
    /// a seq_file formats only what is read (`/proc/key-users` formats one line per uid
    /// that owns keys, thousands on a busy machine, for every page asked for).
    static func read(_ path: String, limit: Int = .max) -> String? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: min(4_096, limit))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            guard
                let n = try? chunk.withUnsafeMutableBytes({ buffer throws(Errno) in
                    try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
                })
            else { return nil }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
