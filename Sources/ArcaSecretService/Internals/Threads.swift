#if canImport(Glibc)
    import Glibc
#endif

/// Starts a detached thread (the event listener, pipelined CreateItem calls); false
/// if none could be started (`body` then never runs). The corresponding C function is `pthread_create`.
enum Threads {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    @discardableResult
    static func detach(_ body: @escaping () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        if rc == 0 { pthread_detach(thread) } else { Unmanaged<Box>.fromOpaque(context).release() }
        return rc == 0
    }
}
