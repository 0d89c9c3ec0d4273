import ArcaSystem
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
/// the WAL from its beginning, as before. After a pass that copied every frame it found,
/// the next commit past the threshold copies the commits that came in during the pass with
/// its own PASSIVE checkpoint if they are at most `finishFrames` (a quarter of the
/// threshold), so that the WAL does start over under a steady stream of writes; after a
/// pass that failed, that a reader held back or that more frames outran, it asks the thread
/// for another pass. Crash safety is SQLite's own: a checkpoint cut short leaves the WAL
/// authoritative, whichever connection ran it.
///
/// Should the thread fall behind (or fail to start), a commit past `inlineThreshold`
/// frames checkpoints on the writer's connection, as SQLite would have: the WAL stays
/// bounded whatever happens here. A thread that failed to start is started again by a
/// commit past the threshold 1 s later, then 2, 4… up to 64 s after each failure in a row.
///
/// The thread holds nothing between checkpoints: each time it is woken it opens its
/// connection, checkpoints and closes it, and it ends after `idleMilliseconds` without a
/// request (a vault of arcad stays open for as long as arcad runs: a thread and two fds
/// per vault, for ever, would run a host with many users out of them). The next commit
/// past the threshold starts it again. Its stack is small (`stackSize`), as arcad's threads'.
///
/// The connection is opened by path, possibly long after the vault was: the checkpoint is
/// skipped unless the file the connection has open is the one at the path
/// (`SQLITE_FCNTL_HAS_MOVED` is 0) and that is still the vault's (same device and inode as
/// when the vault was opened, when the writer's connection passed the same check), so a
/// file put in its place is never written to.
final class WALCheckpointer: Sendable {
    /// WAL frames after which a commit asks the thread for a checkpoint.
    let threshold: Int
    /// WAL frames after which a commit checkpoints itself.
    var inlineThreshold: Int { threshold.multipliedReportingOverflow(by: 8).overflow ? Int.max : threshold * 8 }
    /// The most frames a commit copies itself after a complete pass (the commits that came
    /// in during it): what one commit may pay for instead of asking for another pass.
    var finishFrames: Int { threshold / 4 }
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
        /// Checkpoints the thread ran (a failed one included), and the frames the last one
        /// that ran found and copied.
        var checkpoints = 0
        var last: (walFrames: Int, checkpointed: Int)?
        /// A pass is running; one copied every frame it found (`passFrames`) since the WAL
        /// last started over (the next commit past the threshold may copy the rest itself).
        var inPass = false
        var passEnded = false
        var passFrames = 0
        /// Times the writer's commits found the WAL started over (frames not above the last
        /// commit's): a pass that began before one of them found another WAL than there is now.
        var restarts = 0
        /// Passes finished by the writer's connection: its checkpoint ran (not BUSY).
        var finishes = 0
        /// Called by the thread after it opened its connection (before its checks) and after the checkpoint
        /// (tests: commits during a pass; a throw fails the pass, as a failed open would).
        var passHook: (@Sendable (PassPoint) throws -> Void)?
        /// Checkpoints skipped because the connection's file or the path's was not the vault's.
        var skipped = 0
        /// Threads started (one per busy period), and the last one's kernel id.
        var threadsStarted = 0
        var threadID: Int?
        /// The WAL's frames after the writer's last commit.
        var lastCommitFrames = 0
        /// Starts the thread instead of `DetachedThread.start` (tests: a start that fails).
        var threadStarter: ThreadStarter?
        /// Failed starts in a row, and when (`clock`) a commit may try again: 1 s after the
        /// first, doubling up to 64 s.
        var startFailures = 0
        var retryAt = 0.0
        /// Seconds on a monotonic clock (tests: a clock of their own).
        var clock: @Sendable () -> Double = { MonotonicClock.seconds() }
    }

    /// Starts a thread running its argument, or throws.
    typealias ThreadStarter = @Sendable (@escaping @Sendable () -> Void) throws -> Void

    enum ThreadState {
        case notStarted, running, failed
    }

    /// Where in a pass `State.passHook` is called.
    enum PassPoint {
        case opened, checkpointed
    }

    /// Sets the hook the thread calls during its passes (tests only).
    func setPassHook(_ hook: (@Sendable (PassPoint) throws -> Void)?) {
        state.withLock { $0.passHook = hook }
    }

    /// Sets what starts the thread (tests only; nil: `DetachedThread.start`).
    func setThreadStarter(_ starter: ThreadStarter?) {
        state.withLock { $0.threadStarter = starter }
    }

    /// Sets the clock of the start's backoff (tests only).
    func setClock(_ clock: @escaping @Sendable () -> Double) {
        state.withLock { $0.clock = clock }
    }

    /// The longest wait before a start is tried again, in seconds.
    static let maximumStartBackoff = 64.0

    /// A checkpointer of the vault at `path`, whose file is `identity`.
    init(path: String, identity: FileIdentity?, threshold: Int, idleMilliseconds: Int = 5_000) {
        self.path = path
        self.identity = identity
        self.threshold = max(1, threshold)
        self.idleMilliseconds = max(1, idleMilliseconds)
    }

    /// What a commit does about the WAL.
    private enum AfterCommit {
        case nothing, startThread, checkpointHere, finishPass
    }

    /// After a commit of the writer's connection `writer`, with `frames` in the WAL.
    func committed(frames: Int, writer: Database) {
        let action = state.withLock { s -> AfterCommit in
            // A commit adds frames: no more than the last one's means the WAL started over.
            if frames <= s.lastCommitFrames { s.restarts += 1 }
            s.lastCommitFrames = frames
            guard frames >= threshold else {
                // The WAL started over (or is still short): a pass that ended is history.
                s.passEnded = false
                return .nothing
            }
            guard frames < inlineThreshold else { return .checkpointHere }
            // A pass copied all it found and the WAL did not start over: the commits that came
            // in while it copied are all that is left (SQLite restarts a WAL only once every
            // frame is in the file, and under a steady stream of adds a pass never caught up:
            // the WAL grew to the fallback, and each commit asked for another pass, two syncs
            // every ~5 adds at 5,000 items). This connection is the only writer (arcad holds the
            // user's lock around it), so its pass copies those frames and completes; the next
            // write restarts the WAL. Only a few, though: more is the stall the thread is for.
            if s.passEnded {
                s.passEnded = false
                if frames - s.passFrames <= finishFrames { return .finishPass }
            }
            guard !s.stopping, !s.requested, !s.inPass else { return .nothing }
            if s.thread == .failed {
                // Threads may be short for a while (a full process table, no memory): the
                // writer's fallback bounds the WAL meanwhile; a commit tries again later.
                guard s.clock() >= s.retryAt else { return .nothing }
                s.thread = .notStarted
            }
            s.requested = true
            if s.thread == .notStarted {
                s.thread = .running
                s.threadsStarted += 1
                return .startThread
            }
            wake.post()
            return .nothing
        }
        switch action {
        case .nothing: break
        case .startThread: startThread()
        case .checkpointHere: _ = try? writer.checkpointPassive()
        case .finishPass:
            // nil: BUSY (another connection checkpoints), nothing was copied.
            if (try? writer.checkpointPassive()) != nil { state.withLock { $0.finishes += 1 } }
        }
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

    /// Whether `stop()` was called (tests).
    var isStopping: Bool { state.withLock { $0.stopping } }

    /// A copy of the counters.
    var statistics:
        (
            checkpoints: Int, last: (walFrames: Int, checkpointed: Int)?, lastCommitFrames: Int, skipped: Int,
            threadsStarted: Int, threadID: Int?, running: Bool, finishes: Int
        )
    {
        state.withLock {
            (
                $0.checkpoints, $0.last, $0.lastCommitFrames, $0.skipped, $0.threadsStarted, $0.threadID,
                $0.thread == .running, $0.finishes
            )
        }
    }

    /// Starts the thread, which runs the first checkpoint at once (a failure leaves the
    /// inline fallback until a later commit, after the backoff, starts it).
    private func startThread() {
        let starter = state.withLock { $0.threadStarter }
        do {
            if let starter {
                try starter { [self] in run() }
            } else {
                try DetachedThread.start(stackSize: Self.stackSize) { [self] in run() }
            }
        } catch {
            state.withLock { s in
                s.thread = .failed
                s.requested = false
                s.startFailures += 1
                s.retryAt = s.clock() + min(Self.maximumStartBackoff, Double(1 << min(s.startFailures - 1, 6)))
                // A stop() since the commit saw `.running` and waits for the thread's exit,
                // which no thread will post now: post it for the thread that never ran.
                if s.stopping { exited.post() }
            }
        }
    }

    private enum Step {
        case checkpoint(restarts: Int, hook: (@Sendable (PassPoint) throws -> Void)?), wait, exit
    }

    /// The thread: checkpoints while asked to, ends when stopped or idle. The flags are
    /// authoritative; a wake-up left over from an earlier request only makes it look again.
    private func run() {
        let id = currentThreadID()
        state.withLock { s in
            s.threadID = id
            s.startFailures = 0
        }
        while true {
            let step = state.withLock { s -> Step in
                if s.stopping {
                    s.thread = .notStarted
                    return .exit
                }
                guard s.requested else { return .wait }
                s.requested = false
                s.inPass = true
                return .checkpoint(restarts: s.restarts, hook: s.passHook)
            }
            switch step {
            case .exit:
                exited.post()
                return
            case .checkpoint(let restarts, let hook):
                checkpointOnce(restarts: restarts, hook: hook)
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
    /// `restarts`: `State.restarts` when the pass was taken on.
    private func checkpointOnce(restarts: Int, hook: (@Sendable (PassPoint) throws -> Void)?) {
        var result: (walFrames: Int, checkpointed: Int)?
        var skipped = false
        do {
            let db = try Database(path: path, create: false)
            try hook?(.opened)
            // Checked after the open, before the connection reads anything (which could open
            // the WAL, and its close copy that WAL into its file): the file it holds is the one
            // at the path now (SQLite's check against the open file), and that is the vault's.
            if let identity, (try? db.hasMoved()) == false, FileProbe.identity(path: path) == identity {
                try db.execute("PRAGMA synchronous = FULL")
                result = try db.checkpointPassive()
                try hook?(.checkpointed)
            } else {
                skipped = true
            }
        } catch {}
        state.withLock { s in
            s.inPass = false
            if skipped {
                s.skipped += 1
                return
            }
            // Ended: every frame it found is in the file (not a failure, nor BUSY, nor held back
            // by a reader), and the WAL is still the one it copied. A write after a complete
            // pass restarts the WAL; should one have come before this lock, the crossing commit
            // of the new WAL would count every frame of it as "came in during the pass".
            if let result, result.checkpointed == result.walFrames, s.restarts == restarts {
                s.passEnded = true
                s.passFrames = result.walFrames
            }
            s.checkpoints += 1
            if let result { s.last = result }
        }
    }
}
