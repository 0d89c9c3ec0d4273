import ArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Starts detached threads: arcad's per-connection and watcher threads, and
/// arca-secretd's listener. A target of its own, not part of ArcaSystem: the PAM
/// module links ArcaSystem, and must not even import `pthread_create` (fork safety,
/// checked by Tests/integration/32-pam-fork-and-system.sh).
public enum DetachedThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread with a stack of `stackSize` bytes (nil:
    /// the system's default). The corresponding C functions are
    /// `pthread_attr_setstacksize` and `pthread_create`.
    public static func start(stackSize: Int? = nil, _ body: @escaping () -> Void) throws(Errno) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, context)
        if rc != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            throw Errno(rawValue: rc)
        }
    }
}
