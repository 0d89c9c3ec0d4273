import ArcaSystem

/// Lets one thread wait until others have each posted once: a pipe whose read end
/// the waiter reads, blocking, one byte per post (the bus thread waiting for the
/// CreateItem calls it handed to other connections).
final class Latch: Sendable {
    private let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    /// nil when no pipe can be made (the caller then does the work itself). Both ends
    /// are close-on-exec from the start (`pipe2`): the prompter's fork, on another
    /// thread, never inherits them, not even for a moment.
    init?() {
        guard let ends = try? FileDescriptor.pipe() else { return nil }
        readEnd = ends.read
        writeEnd = ends.write
    }

    deinit {
        readEnd.close()
        writeEnd.close()
    }

    /// Counts one job done. The corresponding C function is `write`.
    func post() {
        let byte: [UInt8] = [1]
        _ = byte.withUnsafeBytes { try? writeEnd.write($0) }
    }

    /// Blocks until `count` posts have been made. The corresponding C function is `read`.
    func wait(count: Int) {
        var remaining = count
        var buffer = [UInt8](repeating: 0, count: 64)
        while remaining > 0 {
            let want = min(buffer.count, remaining)
            let n = buffer.withUnsafeMutableBytes { raw in
                (try? readEnd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[..<want]))) ?? 0
            }
            // 0: end of file or an error other than EINTR (which read retries).
            guard n > 0 else { return }
            remaining -= n
        }
    }
}
