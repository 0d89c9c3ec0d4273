import ArcaCrypto
import ArcaKeyring
import ArcaThreads

/// The threads that serve arcad's connections, one connection per thread at a time.
///
/// A thread that has finished a connection waits a while for the next one instead of
/// exiting. A login makes three connections within a few milliseconds (auth, then
/// open_session, then close_session), and a new thread for each (clone, a stack faulted
/// in page by page, unmapped again at exit) cost arcad more CPU than answering
/// the requests on it (bench/pam, perf on arcad). At most `maxIdle` threads wait,
/// each for at most `idleSeconds`; a connection that finds none waiting gets a new
/// thread at once, as before, so no connection ever waits behind another.
///
/// Why a waiting thread is harmless: it holds no lock, no connection and no closure
/// of the last one; its thread keyring was cleared after the last connection (a key
/// left there would be possessed by the next); its used stack was zeroed or handed
/// back to the kernel (as glibc does when a thread exits); the server wiped the
/// request and reply buffers of its last connection. A thread whose keyring or stack
/// cannot be cleared exits instead of waiting.
final class ConnectionWorkers: @unchecked Sendable {
    // @unchecked: every mutable field is read and written under `condition`.
    private let condition = Condition()
    private var jobs: [() -> Void] = []
    private var idle = 0
    private var started = 0
    private var exited = 0
    /// How many finished threads may wait for a connection.
    let maxIdle: Int
    /// How long a finished thread waits before it exits.
    let idleSeconds: Double

    init(maxIdle: Int = 4, idleSeconds: Double = 30) {
        self.maxIdle = maxIdle
        self.idleSeconds = idleSeconds
    }

    /// Threads started so far (tests: a reused thread starts none).
    var threadsStarted: Int { condition.withLock { started } }

    /// Threads that have stopped taking connections (tests: started − exited are alive).
    var threadsExited: Int { condition.withLock { exited } }

    /// Threads waiting for a connection now.
    var threadsWaiting: Int { condition.withLock { idle - jobs.count } }

    /// Runs `job` on a waiting thread, or on a new one when none waits.
    func run(_ job: @escaping () -> Void) throws {
        let handed = condition.withLock { () -> Bool in
            // Each queued job has a waiting thread of its own: never one job behind another.
            guard idle > jobs.count else {
                started += 1
                return false
            }
            jobs.append(job)
            // broadcast, not signal: older glibc could lose a signal among several timed
            // waiters (glibc bug 25847); at most `maxIdle` threads wake and re-check.
            condition.broadcast()
            return true
        }
        if handed { return }
        do {
            try Threads.detach { [self] in work(first: job) }
        } catch {
            condition.withLock { started -= 1 }
            throw error
        }
    }

    private func work(first: @escaping () -> Void) {
        var job = first
        while true {
            job()
            // Nothing of the last connection waits with the thread: not its closure,
            // not a key in the thread keyring, not what its frames left on the stack.
            job = {}
            guard Self.clearThreadKeyring(), (try? UsedStack.clear()) != nil, let next = nextJob() else {
                condition.withLock { exited += 1 }
                return
            }
            job = next
        }
    }

    /// Empties the thread keyring if the thread has one (without creating it);
    /// false when it exists and could not be cleared.
    private static func clearThreadKeyring() -> Bool {
        guard let ring = try? KeySerial.threadKeyring.resolve(create: false) else { return true }
        return (try? ring.clear()) != nil
    }

    /// The next job, or nil when enough threads wait already or none came in time.
    private func nextJob() -> (() -> Void)? {
        condition.withLock { () -> (() -> Void)? in
            guard idle < maxIdle else { return nil }
            idle += 1
            defer { idle -= 1 }
            let deadline = Clock.monotonicSeconds() + idleSeconds
            while jobs.isEmpty {
                if Clock.monotonicSeconds() >= deadline { return nil }
                condition.wait(until: deadline)
            }
            return jobs.removeFirst()
        }
    }
}
