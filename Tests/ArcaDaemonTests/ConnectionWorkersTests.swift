import ArcaCrypto
import Synchronization
import Testing

@testable import ArcaDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket's stand-in for ConnectionWorkers: `accept()` blocks until a connection is
/// queued, the idle time passes or `stop()`. A connection may name the one thread that
/// may take it (tests that need the same thread twice).
final class FakeListener: ConnectionSource, @unchecked Sendable {
    // @unchecked: `queue` and `stopped` are read and written under `condition`.
    struct Job: Sendable {
        let thread: UInt?
        let body: @Sendable () -> Void
    }
    private let condition = Condition()
    private var queue: [Job] = []
    private var stopped = false
    let idleSeconds: Double
    let refused = Mutex(0)

    init(idleSeconds: Double = 10) { self.idleSeconds = idleSeconds }

    func accept() -> AcceptEvent<Job> {
        condition.withLock {
            let deadline = Clock.monotonicSeconds() + idleSeconds
            let me = UInt(pthread_self())
            while true {
                if stopped { return .stopped }
                if let index = queue.firstIndex(where: { $0.thread == nil || $0.thread == me }) {
                    return .connection(queue.remove(at: index))
                }
                if Clock.monotonicSeconds() >= deadline { return .idle }
                condition.wait(until: deadline)
            }
        }
    }

    func serve(_ connection: Job) { connection.body() }

    func refuse(_ connection: Job, because error: any Error) { refused.withLock { $0 += 1 } }

    /// Queues a connection.
    func connect(onThread thread: UInt? = nil, _ body: @escaping @Sendable () -> Void) {
        condition.withLock {
            queue.append(Job(thread: thread, body: body))
            condition.broadcast()
        }
    }

    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
}

/// arcad's connection threads: a thread that finished a connection accepts the next, one
/// thread is always accepting (a connection never waits behind a busy one), an accepting
/// thread leaves after its idle time unless it is the last, and all leave at stop.
@Suite struct ConnectionWorkersTests {
    /// Polls `condition` until it holds or 5 s pass; returns whether it held.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Clock.monotonicSeconds() + 5
        while Clock.monotonicSeconds() < deadline {
            if condition() { return true }
            usleep(1_000)
        }
        return condition()
    }

    @Test func aFinishedThreadAcceptsAndServesTheNextConnection() throws {
        let listener = FakeListener()
        defer { listener.stop() }
        let workers = ConnectionWorkers(maxIdle: 2)
        try workers.start(listener)
        #expect(Self.eventually { workers.threadsAccepting == 1 })
        let threads = Mutex<[UInt]>([])
        for round in 0..<4 {
            listener.connect { threads.withLock { $0.append(UInt(pthread_self())) } }
            #expect(Self.eventually { threads.withLock { $0.count } == round + 1 })
            #expect(Self.eventually { workers.threadsAccepting == 2 })
        }
        // The first connection found one thread accepting: a new thread served it while the
        // first went on accepting. From then on two accept, and the one that takes a
        // connection serves it: no thread started for the next three.
        #expect(workers.threadsStarted == 2)
        #expect(Set(threads.withLock { $0 }).count <= 2)
    }

    @Test func aConnectionNeverWaitsBehindABusyThread() throws {
        let listener = FakeListener()
        defer { listener.stop() }
        let workers = ConnectionWorkers(maxIdle: 1)
        try workers.start(listener)
        // Six jobs that each wait until all six run: they can only finish if each
        // got a thread of its own at once.
        let arrived = Mutex(0)
        let finished = Mutex(0)
        let job: @Sendable () -> Void = {
            arrived.withLock { $0 += 1 }
            _ = Self.eventually { arrived.withLock { $0 } >= 6 }
            finished.withLock { $0 += 1 }
        }
        for _ in 0..<6 { listener.connect(job) }
        #expect(Self.eventually { finished.withLock { $0 } == 6 })
        #expect(arrived.withLock { $0 } == 6)
        #expect(workers.threadsStarted == 7)
        // Two stay accepting (maxIdle + 1); the five others exit.
        #expect(Self.eventually { workers.threadsStarted - workers.threadsExited == 2 })
        #expect(workers.threadsExited == 5)
        #expect(workers.threadsAccepting == 2)
        // Three at once: one of the accepting threads serves one, the other hands two to
        // new threads and goes on accepting.
        arrived.withLock { $0 = 3 }
        finished.withLock { $0 = 0 }
        for _ in 0..<3 { listener.connect(job) }
        #expect(Self.eventually { finished.withLock { $0 } == 3 })
        #expect(workers.threadsStarted == 9)
        #expect(listener.refused.withLock { $0 } == 0)
    }

    @Test func anAcceptingThreadLeavesAfterItsIdleTimeButTheLastStays() throws {
        let listener = FakeListener(idleSeconds: 0.05)
        defer { listener.stop() }
        let workers = ConnectionWorkers(maxIdle: 4)
        try workers.start(listener)
        let ran = Mutex(0)
        listener.connect { ran.withLock { $0 += 1 } }
        #expect(Self.eventually { ran.withLock { $0 } == 1 })
        #expect(workers.threadsStarted == 2)
        #expect(Self.eventually { workers.threadsExited == 1 })
        // Many idle times later the last one still accepts.
        usleep(300_000)
        #expect(workers.threadsAccepting == 1)
        #expect(workers.threadsExited == 1)
        listener.connect { ran.withLock { $0 += 1 } }
        #expect(Self.eventually { ran.withLock { $0 } == 2 })
    }

    @Test func everyThreadLeavesAtStop() throws {
        let listener = FakeListener()
        let workers = ConnectionWorkers(maxIdle: 4)
        try workers.start(listener)
        let ran = Mutex(0)
        for _ in 0..<3 { listener.connect { ran.withLock { $0 += 1 } } }
        #expect(Self.eventually { ran.withLock { $0 } == 3 })
        #expect(Self.eventually { workers.threadsAccepting >= 2 })
        listener.stop()
        #expect(Self.eventually { workers.threadsAccepting == 0 && workers.threadsExited == workers.threadsStarted })
    }
}
