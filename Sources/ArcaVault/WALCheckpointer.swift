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
///
/// The thread holds nothing between checkpoints: each time it is woken it opens its
/// connection, checkpoints and closes it, and it ends after `idleMilliseconds` without a
/// request (a vault of arcad stays open for as long as arcad runs: a thread and two fds
/// per vault, for ever, would run a host with many users out of them). The next commit
/// past the threshold starts it again. Its stack is small (`stackSize`), as arcad's threads'.
///
/// The connection is opened by path, possibly long after the vault was: the checkpoint is
/// skipped unless the file at the path is still the vault's (same device and inode as
/// when the vault was opened), so a file put in its place is never written to.
final class WALCheckpointer: Sendable {
    /// WAL frames after which a commit asks the thread for a checkpoint.
    let threshold: Int
    /// WAL frames after which a commit checkpoints itself.
    var inlineThreshold: Int { threshold.multipliedReportingOverflow(by: 8).overflow ? Int.max : threshold * 8 }
    /// How long the thread waits for the next request before it ends.
    let idleMilliseconds: Int
    /// The checkpoint thread's stack, as arcad's threads' (the default is 8 MiB).
    static let stackSize = 512 * 1024
    private let path: String
    /// The vault's file when it was opened (nil: unknown, no checkpoint by path).
    private let identity: FileIdentity?
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
        /// Checkpoints skipped because the path no longer named the vault's file.
        var skipped = 0
        /// Threads started (one per busy period), and the last one's kernel id.
        var threadsStarted = 0
        var threadID: Int?
        /// The WAL's frames after the writer's last commit.
        var lastCommitFrames = 0
    }

    enum ThreadState {
        case notStarted, running, failed
    }

    /// A checkpointer of the vault at `path`, whose file is `identity`.
    init(path: String, identity: FileIdentity?, threshold: Int, idleMilliseconds: Int = 5_000) {
        self.path = path
        self.identity = identity
        self.threshold = max(1, threshold)
        self.idleMilliseconds = max(1, idleMilliseconds)
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
                s.threadsStarted += 1
                return true
            }
            wake.post()
            return false
        }
        if start { startThread() }
        if frames >= inlineThreshold { _ = try? writer.checkpointPassive() }
    }

    /// Ends the thread (after the checkpoint it may be running).
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
    var statistics:
        (
            checkpoints: Int, last: (walFrames: Int, checkpointed: Int)?, lastCommitFrames: Int, skipped: Int,
            threadsStarted: Int, threadID: Int?, running: Bool
        )
    {
        state.withLock {
            (
                $0.checkpoints, $0.last, $0.lastCommitFrames, $0.skipped, $0.threadsStarted, $0.threadID,
                $0.thread == .running
            )
        }
    }

    /// Starts the thread, which runs the first checkpoint at once (a failure leaves the
    /// inline fallback).
    private func startThread() {
        do {
            try DetachedThread.start(stackSize: Self.stackSize) { [self] in run() }
        } catch {
            state.withLock { $0.thread = .failed }
        }
    }

    private enum Step {
        case checkpoint, wait, exit
    }

    /// The thread: checkpoints while asked to, ends when stopped or idle. The flags are
    /// authoritative; a wake-up left over from an earlier request only makes it look again.
    private func run() {
        let id = currentThreadID()
        state.withLock { $0.threadID = id }
        while true {
            let step = state.withLock { s -> Step in
                if s.stopping {
                    s.thread = .notStarted
                    return .exit
                }
                guard s.requested else { return .wait }
                s.requested = false
                return .checkpoint
            }
            switch step {
            case .exit:
                exited.post()
                return
            case .checkpoint:
                checkpointOnce()
            case .wait:
                if wake.wait(milliseconds: idleMilliseconds) { continue }
                // Idle: ends unless a request or a stop came in meanwhile (under the lock,
                // so a commit after this starts a new thread).
                let idle = state.withLock { s -> Bool in
                    guard !s.requested, !s.stopping else { return false }
                    s.thread = .notStarted
                    return true
                }
                if idle { return }
            }
        }
    }

    /// Opens a connection, checkpoints if the path still names the vault's file, closes it.
    private func checkpointOnce() {
        var result: (walFrames: Int, checkpointed: Int)?
        var skipped = false
        do {
            let db = try Database(path: path, create: false)
            // Checked after the open: the file this connection holds is the one at the path now.
            if let identity, FileProbe.identity(path: path) == identity {
                try db.execute("PRAGMA synchronous = FULL")
                result = try db.checkpointPassive()
            } else {
                skipped = true
            }
        } catch {}
        state.withLock { s in
            if skipped {
                s.skipped += 1
                return
            }
            s.checkpoints += 1
            if let result { s.last = result }
        }
    }
}
