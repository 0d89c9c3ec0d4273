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
        while sem_wait(semaphore) != 0, errno == EINTR {}
    }
}
