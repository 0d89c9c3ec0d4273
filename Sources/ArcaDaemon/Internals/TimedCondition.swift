#if canImport(Glibc)
import Glibc
#endif

/// A mutex with one condition variable on the monotonic clock, with a timed wait: what a thread
/// waiting for vault events sleeps on. `Synchronization.Mutex` has no condition.
final class TimedCondition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
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

    /// Inside `withLock`: sleeps until `broadcast` or the monotonic `deadline`
    /// (seconds). The corresponding C function is `pthread_cond_timedwait`.
    func wait(until deadline: Double) {
        var ts = timespec()
        ts.tv_sec = Int(deadline)
        ts.tv_nsec = Int((deadline - Double(Int(deadline))) * 1e9)
        _ = pthread_cond_timedwait(condition, mutex, &ts)
    }

    /// Inside `withLock`: wakes every waiter. The corresponding C function is `pthread_cond_broadcast`.
    func broadcast() { pthread_cond_broadcast(condition) }
}
