import ArcaSystem
import CArcaSystem

/// What a thread's earlier work left on its stack, for a thread that goes on to
/// other work (arcad's reused connection threads).
public enum UsedStack {
    /// Zeroes the calling thread's stack below the caller's frame: the nearest 32 KiB
    /// in place, every page further down handed back to the kernel (it reads as zeros),
    /// as glibc does when a thread exits. Not for the main thread. The corresponding
    /// C functions are `explicit_bzero`, `pthread_getattr_np` and `madvise(MADV_DONTNEED)`.
    public static func clear() throws(Errno) {
        if arca_clear_used_stack() != 0 { throw Errno.current }
    }

    /// The addresses of the calling thread's stack, guard page excluded.
    /// The corresponding C function is `pthread_getattr_np`.
    public static func range() throws(Errno) -> Range<UInt> {
        var low: UInt = 0
        var size = 0
        if arca_thread_stack(&low, &size) != 0 { throw Errno.current }
        return low..<(low + UInt(size))
    }
}
