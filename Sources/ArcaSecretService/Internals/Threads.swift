import ArcaSystem
import ArcaThreads

/// Starts a detached thread (the event listener, a prompt's unlock) through
/// ArcaThreads' ``DetachedThread``, with the default stack.
enum Threads {
    /// Runs `body` on a new detached thread; if none can be started the work is not
    /// done, as before: the caller's next event or timeout reports it.
    static func detach(_ body: @escaping () -> Void) {
        try? DetachedThread.start(body)
    }
}
