import ArcaThreads
import Synchronization

/// Checkpoints one vault's WAL on a thread of its own, off the request path.
///
/// SQLite's auto-checkpoint runs inside the commit that crosses its threshold: every
/// ~70th add paid for writing back a few hundred random pages and an fsync of the
/// database file (10–30 ms at 10,000 items). The writer's connection now has no
/// auto-checkpoint; its commits report the WAL's size (`Database.onCommitToWAL`), and
/// past `threshold` frames they wake this thread, which runs a PASSIVE checkpoint on
/// its own connection: it copies what no reader still needs and never waits for, or
/// blocks, a writer. The next write transaction after a complete checkpoint restarts
/// the WAL from its beginning, as before. Crash safety is SQLite's own: a checkpoint
/// cut short leaves the WAL authoritative, whichever connection ran it.
///
/// Should the thread fall behind (or fail to start), a commit past `inlineThreshold`
/// frames checkpoints on the writer's connection, as SQLite would have: the WAL stays
/// bounded whatever happens here.
final class WALCheckpointer: Sendable {
    /// WAL frames after which a commit asks the thread for a checkpoint.
    let threshold: Int
    /// WAL frames after which a commit checkpoints itself.
    var inlineThreshold: Int { threshold.multipliedReportingOverflow(by: 8).overflow ? Int.max : threshold * 8 }
    private let path: String
    private let state = Mutex(State())
    private let wake = Semaphore()
    private let exited = Semaphore()

    /// What the thread is asked to do, and what it did (for tests).
    struct State {
        var thread = ThreadState.notStarted
        var requested = false
        var stopping = false
        /// Checkpoints the thread ran, and the frames the last one found and copied.
        var checkpoints = 0
        var last: (walFrames: Int, checkpointed: Int)?
        /// The WAL's frames after the writer's last commit.
        var lastCommitFrames = 0
    }

    enum ThreadState {
        case notStarted, running, failed
    }

    init(path: String, threshold: Int) {
        self.path = path
        self.threshold = max(1, threshold)
    }

    /// After a commit of the writer's connection `writer`, with `frames` in the WAL.
    func committed(frames: Int, writer: Database) {
        let start = state.withLock { s -> Bool in
            s.lastCommitFrames = frames
            guard frames >= threshold, frames < inlineThreshold else { return false }
            guard s.thread != .failed, !s.stopping, !s.requested else { return false }
            s.requested = true
            if s.thread == .notStarted {
                s.thread = .running
                return true
            }
            wake.post()
            return false
        }
        if start { startThread() }
        if frames >= inlineThreshold { _ = try? writer.checkpointPassive() }
    }

    /// Ends the thread (after the checkpoint it may be running) and closes its connection.
    func stop() {
        let running = state.withLock { s -> Bool in
            s.stopping = true
            return s.thread == .running
        }
        guard running else { return }
        wake.post()
        exited.wait()
    }

    /// A copy of the counters.
    var statistics: (checkpoints: Int, last: (walFrames: Int, checkpointed: Int)?, lastCommitFrames: Int) {
        state.withLock { ($0.checkpoints, $0.last, $0.lastCommitFrames) }
    }

    /// Opens the thread's connection here (a failure leaves the inline fallback) and
    /// starts the thread, which runs the first checkpoint at once.
    private func startThread() {
        let db: Database
        do {
            db = try Database(path: path, create: false)
            try db.execute("PRAGMA synchronous = FULL")
        } catch {
            state.withLock { $0.thread = .failed }
            return
        }
        let connection = ConnectionBox(db)
        wake.post()
        do {
            try DetachedThread.start { [self] in run(connection) }
        } catch {
            state.withLock { $0.thread = .failed }
        }
    }

    private func run(_ connection: ConnectionBox) {
        while true {
            wake.wait()
            let stopping = state.withLock { s -> Bool in
                s.requested = false
                return s.stopping
            }
            if stopping { break }
            let result = try? connection.db?.checkpointPassive()
            state.withLock { s in
                s.checkpoints += 1
                if let result { s.last = result }
            }
        }
        connection.close()
        exited.post()
    }
}

/// The checkpoint thread's connection, handed over once and used by that thread alone.
// @unchecked: after `startThread` hands it over, only the checkpoint thread touches it.
private final class ConnectionBox: @unchecked Sendable {
    private(set) var db: Database?
    init(_ db: Database) { self.db = db }
    func close() { db = nil }
}
