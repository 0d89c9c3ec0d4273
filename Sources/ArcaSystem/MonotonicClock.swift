#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`): time that a change of the wall clock does not
/// move, for deadlines and timeouts.
public enum MonotonicClock {
    /// Milliseconds since an arbitrary fixed point (the boot). The corresponding C function
    /// is `clock_gettime(CLOCK_MONOTONIC)`.
    public static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
