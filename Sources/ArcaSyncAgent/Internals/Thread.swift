#if canImport(Glibc)
    import Glibc
#endif

/// A detached thread for a watcher (FoundationEssentials has no Thread; Dispatch's pool is
/// not for calls that block for minutes).
enum Thread {
    static func start(_ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
                box.body()
                return nil
            }, box)
        if result == 0 { pthread_detach(thread) } else { Unmanaged<Box>.fromOpaque(box).release() }
    }
}
