#if canImport(Glibc)
    import Glibc
#endif

/// Lets one thread wait until others have each posted once: a pipe whose read end
/// the waiter reads, blocking, one byte per post (the bus thread waiting for the
/// CreateItem calls it handed to other connections).
final class Latch: Sendable {
    private let readFD: Int32
    private let writeFD: Int32

    /// nil when no pipe can be made (the caller then does the work itself).
    /// The corresponding C functions are `pipe` and `fcntl`.
    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readFD = ends[0]
        writeFD = ends[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Counts one job done. The corresponding C function is `write`.
    func post() {
        var byte: UInt8 = 1
        while write(writeFD, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Blocks until `count` posts have been made. The corresponding C function is `read`.
    func wait(count: Int) {
        var remaining = count
        var buffer = [UInt8](repeating: 0, count: 64)
        while remaining > 0 {
            let n = read(readFD, &buffer, min(buffer.count, remaining))
            if n > 0 {
                remaining -= n
            } else if n == 0 || errno != EINTR {
                return
            }
        }
    }
}
