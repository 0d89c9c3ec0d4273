import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Starts detached threads. arcad serves each connection on its own thread, so
/// a slow client blocks nobody else; per-user work is serialised by locks.
enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread with a 512 KiB stack. The corresponding
    /// C functions are `pthread_attr_setstacksize` and `pthread_create`.
    static func detach(_ body: @escaping () -> Void) throws {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, 512 * 1024)
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                box.body()
                return nil
            }, context)
        if rc != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            throw SystemError(call: "pthread_create", errno: Errno(rawValue: rc))
        }
    }
}
