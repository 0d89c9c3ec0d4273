import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A counting semaphore between threads of one process (the WAL checkpointer's wake-ups).
// @unchecked: a POSIX semaphore, thread-safe but opaque to the compiler.
final class Semaphore: @unchecked Sendable {
    // Heap-allocated: a semaphore must never move.
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    /// The corresponding C function is `sem_init`.
    init() {
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Adds one; wakes a waiter. The corresponding C function is `sem_post`.
    func post() {
        sem_post(semaphore)
    }

    /// Waits until the count is positive, then takes one; a signal does not end the wait.
    /// The corresponding C function is `sem_wait`.
    func wait() {
        _ = nothingOrErrno { sem_wait(semaphore) }
    }

    /// Like `wait`, but gives up after `milliseconds`; true if it took one. The
    /// corresponding C function is `sem_timedwait` (on the calendar clock: a clock step
    /// only lengthens or shortens one idle period).
    func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += milliseconds / 1000
        deadline.tv_nsec += (milliseconds % 1000) * 1_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        let taken = nothingOrErrno { sem_timedwait(semaphore, &deadline) }
        if case .success = taken { return true }
        return false
    }
}

/// The calling thread's kernel id (its `/proc/self/task` entry), from the link
/// `/proc/thread-self`. The corresponding C function is `readlink`.
func currentThreadID() -> Int? {
    var buffer = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard length > 0 else { return nil }
    let text = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.split(separator: "/").last.flatMap { Int($0) }
}
