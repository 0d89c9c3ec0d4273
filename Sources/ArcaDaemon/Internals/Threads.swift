import ArcaSystem
import ArcaThreads

/// arcad serves each connection on its own thread, so a slow client blocks nobody
/// else; per-user work is serialised by locks.
enum Threads {
    /// Runs `body` on a new detached thread (ArcaThreads' ``DetachedThread``) with a
    /// 512 KiB stack, enough for a request's deepest path.
    static func detach(_ body: @escaping () -> Void) throws {
        do {
            try DetachedThread.start(stackSize: 512 * 1024, body)
        } catch {
            throw SystemError(call: "pthread_create", errno: error)
        }
    }
}
