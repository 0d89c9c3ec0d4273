#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The monotonic clock (`CLOCK_MONOTONIC`): time that a change of the wall clock does not
/// move, for deadlines, timeouts and measurements. The one reader of it in Swift: every
/// other unit here is derived from ``nanoseconds()``.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (the boot). The corresponding C function
    /// is `clock_gettime(CLOCK_MONOTONIC)`.
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Whole milliseconds since the same point as ``nanoseconds()`` (rounded down).
    public static func milliseconds() -> Int { Int(nanoseconds() / 1_000_000) }

    /// Seconds since the same point as ``nanoseconds()``, with its resolution (a `Double`
    /// holds nanoseconds exactly for 104 days of uptime, and to the microsecond far beyond).
    public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}
