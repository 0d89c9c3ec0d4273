import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ArcaVault

/// The checkpoint thread's start failing (`WALCheckpointer.setThreadStarter`): closing the
/// vault does not wait for a thread that never ran.
extension CheckpointTests {
    struct StartFailed: Error {}

    /// A checkpointer of a fresh database in `dir` (no vault: only the start is exercised),
    /// and its writer's connection for `committed`.
    private func checkpointer(_ dir: TempDir) throws -> (WALCheckpointer, Database) {
        let path = dir.path + "/start.db"
        let db = try Database(path: path, create: true)
        return (WALCheckpointer(path: path, identity: nil, threshold: 10), db)
    }

    @Test func stopDuringAFailingThreadStartReturns() throws {
        let dir = try TempDir()
        let (checkpointer, db) = try checkpointer(dir)
        let starting = DispatchSemaphore(value: 0)
        let mayFail = DispatchSemaphore(value: 0)
        checkpointer.setThreadStarter { _ in
            starting.signal()
            mayFail.wait()
            throw StartFailed()
        }
        // The crossing commit (on a thread of its own: the start blocks it) marks the thread
        // running and calls the starter, which waits.
        let committed = DispatchSemaphore(value: 0)
        nonisolated(unsafe) let writer = db  // used by that thread alone until it signals
        DispatchQueue.global().async {
            checkpointer.committed(frames: 10, writer: writer)
            committed.signal()
        }
        #expect(starting.wait(timeout: .now() + 20) == .success)
        // stop() sees the thread running and waits for its exit; then the start fails.
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            checkpointer.stop()
            stopped.signal()
        }
        // Set under the lock that read `.running`: from here stop() is bound to wait.
        #expect(eventually { checkpointer.isStopping })
        mayFail.signal()
        #expect(committed.wait(timeout: .now() + 20) == .success)
        #expect(stopped.wait(timeout: .now() + 20) == .success, "stop() waits for a thread that never started")
        #expect(checkpointer.statistics.running == false)
        #expect(checkpointer.statistics.threadsStarted == 1)
    }

    /// Polls (up to 20 s) until `condition` holds.
    func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<2000 {
            if condition() { return true }
            usleep(10_000)
        }
        return false
    }
}

extension CheckpointTests {
    @Test func aFailedStartIsTriedAgainByACommitAfterABackoffDoublingTo64Seconds() throws {
        let dir = try TempDir()
        let (checkpointer, db) = try checkpointer(dir)
        defer { checkpointer.stop() }
        let now = Mutex(1000.0)
        let calls = Mutex(0)
        let failing = Mutex(true)
        checkpointer.setClock { now.withLock { $0 } }
        checkpointer.setThreadStarter { body in
            calls.withLock { $0 += 1 }
            if failing.withLock({ $0 }) { throw StartFailed() }
            Thread.detachNewThread(body)
        }
        var frames = 10
        /// A commit past the threshold at `time`; returns the starts tried so far.
        func commit(at time: Double) -> Int {
            now.withLock { $0 = time }
            frames += 1
            checkpointer.committed(frames: frames, writer: db)
            return calls.withLock { $0 }
        }
        #expect(commit(at: 1000) == 1)
        #expect(commit(at: 1000) == 1)
        var failedAt = 1000.0
        var tries = 1
        // After the nth failure in a row the next try waits 1, 2, 4… 64, 64 s.
        for backoff in [1.0, 2, 4, 8, 16, 32, 64, 64] {
            #expect(commit(at: failedAt + backoff - 0.001) == tries, "before \(backoff) s")
            tries += 1
            #expect(commit(at: failedAt + backoff) == tries, "at \(backoff) s")
            failedAt += backoff
        }
        #expect(checkpointer.statistics.running == false)
        // Once a start works, the thread runs its pass (skipped here: no identity).
        failing.withLock { $0 = false }
        #expect(commit(at: failedAt + 64) == tries + 1)
        #expect(eventually { checkpointer.statistics.skipped == 1 })
        #expect(checkpointer.statistics.threadsStarted == 10)
    }
}
