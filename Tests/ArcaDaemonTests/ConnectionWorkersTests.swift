import ArcaCrypto
import Synchronization
import Testing

@testable import ArcaDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// arcad's connection threads: a finished thread serves the next connection, a
/// connection never waits behind a busy one, and a waiting thread leaves after its
/// idle time.
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

    @Test func aFinishedThreadServesTheNextConnection() throws {
        let workers = ConnectionWorkers(maxIdle: 2, idleSeconds: 10)
        let threads = Mutex<[UInt]>([])
        for _ in 0..<3 {
            try workers.run { threads.withLock { $0.append(UInt(pthread_self())) } }
            #expect(Self.eventually { workers.threadsWaiting == 1 })
        }
        #expect(threads.withLock { $0.count } == 3)
        #expect(Set(threads.withLock { $0 }).count == 1)
        #expect(workers.threadsStarted == 1)
    }

    @Test func aConnectionNeverWaitsBehindABusyThread() throws {
        let workers = ConnectionWorkers(maxIdle: 1, idleSeconds: 10)
        // Six jobs that each wait until all six run: they can only finish if each
        // got a thread of its own at once.
        let arrived = Mutex(0)
        let finished = Mutex(0)
        let job = {
            arrived.withLock { $0 += 1 }
            _ = Self.eventually { arrived.withLock { $0 } >= 6 }
            finished.withLock { $0 += 1 }
        }
        for _ in 0..<6 { try workers.run(job) }
        #expect(Self.eventually { finished.withLock { $0 } == 6 })
        #expect(arrived.withLock { $0 } == 6)
        #expect(workers.threadsStarted == 6)
        // One thread stays for the next connection; the five others exit (waiting == 1
        // alone would not show they left: one waits while others may still be about to).
        #expect(Self.eventually { workers.threadsStarted - workers.threadsExited == 1 })
        #expect(workers.threadsExited == 5)
        #expect(Self.eventually { workers.threadsWaiting == 1 })
        // Three at once: the waiting thread takes one, two new threads the others.
        arrived.withLock { $0 = 3 }
        finished.withLock { $0 = 0 }
        for _ in 0..<3 { try workers.run(job) }
        #expect(Self.eventually { finished.withLock { $0 } == 3 })
        #expect(workers.threadsStarted == 8)
    }

    @Test func aWaitingThreadLeavesAfterItsIdleTime() throws {
        let workers = ConnectionWorkers(maxIdle: 4, idleSeconds: 0.05)
        let ran = Mutex(0)
        try workers.run { ran.withLock { $0 += 1 } }
        #expect(Self.eventually { ran.withLock { $0 } == 1 })
        // It waits first (0 before that proves nothing), then leaves.
        #expect(Self.eventually { workers.threadsWaiting == 1 })
        #expect(Self.eventually { workers.threadsWaiting == 0 && workers.threadsExited == 1 })
        try workers.run { ran.withLock { $0 += 1 } }
        #expect(Self.eventually { ran.withLock { $0 } == 2 })
        #expect(workers.threadsStarted == 2)
    }
}
