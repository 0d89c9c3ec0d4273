import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The process's memory: the heap, and fresh pages outside it.
public enum Heap {
    /// Hands freed heap pages back to the system (a long-running process that once held
    /// thousands of items would otherwise keep them). The corresponding C function is `malloc_trim`.
    public static func trim() { _ = arca_malloc_trim(0) }

    /// `byteCount` bytes of fresh private, readable and writable pages (zeroed by the kernel), or
    /// nil. The corresponding C function is `mmap` (`MAP_PRIVATE | MAP_ANONYMOUS`); `munmap` frees them.
    public static func mapPages(_ byteCount: Int) -> UnsafeMutableRawPointer? {
        let raw = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        return raw == ARCA_MAP_FAILED ? nil : raw
    }
}
