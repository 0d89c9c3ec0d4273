#if canImport(Glibc)
    import Glibc
#endif

/// A mutex with a condition variable on the monotonic clock, for threads that wait their
/// turn (the derivation queue) or for something to happen, with a deadline (vault events).
/// Synchronization's `Mutex` has no condition to wait on.
// @unchecked: a pthread mutex and condition variable, which are thread-safe but opaque to the compiler.
final class Condition: @unchecked Sendable {
    // Heap-allocated: a pthread mutex or condition must never move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        // Timed waits count on the monotonic clock, which a change of the wall clock does not move.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` holding the mutex. The corresponding C functions are
    /// `pthread_mutex_lock` and `pthread_mutex_unlock`.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock`: releases the mutex until `broadcast`, then takes it
    /// again. Callers re-check their predicate (wake-ups may be spurious). The
    /// corresponding C function is `pthread_cond_wait`.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Inside `withLock`: as `wait()`, but also returns at the monotonic `deadline`
    /// (seconds). The corresponding C function is `pthread_cond_timedwait`.
    func wait(until deadline: Double) {
        var ts = timespec()
        ts.tv_sec = Int(deadline)
        ts.tv_nsec = Int((deadline - Double(Int(deadline))) * 1e9)
        _ = pthread_cond_timedwait(condition, mutex, &ts)
    }

    /// Wakes every waiter. The corresponding C function is `pthread_cond_broadcast`.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
