import ArcaSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A pool of mlocked slots for small secrets.
///
/// `sodium_malloc` maps fresh pages with guard pages for every allocation (five
/// system calls and page faults, ~30 µs); reading one secret out of the kernel
/// keyring costs ~3 µs. Small secrets (keys, passwords, most item secrets) take a
/// slot here instead: memory that is mlocked (never swapped), excluded from core
/// dumps, zeroed over the whole slot when released, and reused. What is given up
/// is the per-secret guard page; secrets above 4 KiB keep `sodium_malloc`.
/// Chunks are never unmapped, so the pool stays at its peak size.
enum SecurePool {
    /// Slot sizes; a secret takes the smallest that fits.
    static let slotSizes = [64, 256, 1024, 4096]
    /// Bytes mapped at a time per size class.
    static let chunkSize = 256 * 1024

    private struct FreeLists {
        var slots: [[UnsafeMutableRawPointer]] = Array(repeating: [], count: SecurePool.slotSizes.count)
        /// Set when mlock failed once: the pool then stays out of the way.
        var disabled = false
    }

    // Raw pointers are not Sendable; they are only handed out under the lock and
    // each is owned by exactly one SecretBytes until returned.
    nonisolated(unsafe) private static let lists = Mutex(FreeLists())

    /// The slot size for `count` bytes, or nil if too large for the pool.
    static func slotSize(for count: Int) -> Int? { slotSizes.first { count <= $0 } }

    /// A zeroed slot of at least `count` bytes, or nil (too large, or the pool is
    /// unavailable: the caller falls back to `sodium_malloc`).
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        guard let index = slotSizes.firstIndex(where: { count <= $0 }) else { return nil }
        return lists.withLock { lists -> UnsafeMutableRawPointer? in
            if lists.disabled { return nil }
            if lists.slots[index].isEmpty {
                guard let chunk = mapChunk() else {
                    lists.disabled = true
                    return nil
                }
                let size = slotSizes[index]
                for offset in stride(from: 0, to: chunkSize, by: size) { lists.slots[index].append(chunk + offset) }
            }
            return lists.slots[index].popLast()
        }
    }

    /// Returns a slot (already zeroed by the caller) of the size class for `count`.
    static func release(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard let index = slotSizes.firstIndex(where: { count <= $0 }) else { return }
        lists.withLock { $0.slots[index].append(pointer) }
    }

    /// Maps, locks and excludes from core dumps one chunk. The corresponding C
    /// functions are `mmap`, `mlock` and `madvise(MADV_DONTDUMP)`.
    private static func mapChunk() -> UnsafeMutableRawPointer? {
        guard let raw = mmap(nil, chunkSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              raw != MAP_FAILED else { return nil }
        guard mlock(raw, chunkSize) == 0 else {
            munmap(raw, chunkSize)
            return nil
        }
        // No secrets in core files; a kernel that refuses only loses that.
        try? SecureZero.excludeFromCoreDumps(UnsafeMutableRawBufferPointer(start: raw, count: chunkSize))
        return raw
    }
}
