import ArcaSystem
import ArcaThreads

/// Starts a detached thread (the event listener, a prompt's unlock, pipelined CreateItem
/// calls) through ArcaThreads' ``DetachedThread``, with the default stack.
enum Threads {
    /// Runs `body` on a new detached thread; false if none could be started (`body` then
    /// never runs, and the caller does the work itself or reports it).
    @discardableResult
    static func detach(_ body: @escaping () -> Void) -> Bool {
        do {
            try DetachedThread.start(body)
            return true
        } catch {
            return false
        }
    }
}
