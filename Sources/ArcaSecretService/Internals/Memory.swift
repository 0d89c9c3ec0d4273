/// glibc's `malloc_trim`, which Swift's Glibc module does not export.
@_silgen_name("malloc_trim")
private func system_malloc_trim(_ pad: Int) -> Int32

/// Heap housekeeping of the long-running arca-secretd.
enum Memory {
    /// Hands freed heap pages back to the system: a search or prefetch over
    /// thousands of items leaves megabytes free that malloc would otherwise keep
    /// for the life of the process. The corresponding C function is `malloc_trim`.
    static func trim() { _ = system_malloc_trim(0) }
}
