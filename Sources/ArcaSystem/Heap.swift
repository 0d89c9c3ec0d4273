import CArcaSystem

/// The process heap.
public enum Heap {
    /// Hands freed heap pages back to the system (a long-running process that once held
    /// thousands of items would otherwise keep them). The corresponding C function is `malloc_trim`.
    public static func trim() { _ = arca_malloc_trim(0) }
}
