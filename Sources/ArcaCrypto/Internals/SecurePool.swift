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
///
/// The pool grows lazily: a size class maps one page first and doubles each
/// later chunk up to `maxChunkSize`. A process that holds one secret (`arca get`,
/// one PAM call) maps and locks a page or two instead of 256 KiB per class:
/// mlock faults in every page it locks, and that was most of what `arca get`
/// paid over `keyctl print` (bench/cli).
enum SecurePool {
    /// Slot sizes; a secret takes the smallest that fits.
    static let slotSizes = [64, 256, 1024, 4096]
    /// The first chunk of each size class: one page (a multiple of every slot size).
    static let firstChunkSize = 4096
    /// The largest chunk mapped at a time per size class.
    static let maxChunkSize = 256 * 1024

    private struct FreeLists {
        var slots: [[Slot]] = Array(repeating: [], count: SecurePool.slotSizes.count)
        /// The size of the next chunk of each class: doubles up to `maxChunkSize`.
        var nextChunkSize = Array(repeating: SecurePool.firstChunkSize, count: SecurePool.slotSizes.count)
        /// Set when mlock failed once: the pool then stays out of the way.
        var disabled = false
    }

    /// One free slot's address.
    // @unchecked: a raw pointer, handed out under the lock and owned by exactly one SecretBytes until returned.
    private struct Slot: @unchecked Sendable {
        let address: UnsafeMutableRawPointer
    }

    private static let lists = Mutex(FreeLists())

    /// The chunk a size class maps after one of `size` bytes: twice as large, at most `maxChunkSize`.
    static func chunkSize(after size: Int) -> Int { min(size * 2, maxChunkSize) }

    /// The slot size for `count` bytes, or nil if too large for the pool.
    static func slotSize(for count: Int) -> Int? { slotSizes.first { count <= $0 } }

    /// A zeroed slot of at least `count` bytes, or nil (too large, or the pool is
    /// unavailable: the caller falls back to `sodium_malloc`).
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        guard let index = slotSizes.firstIndex(where: { count <= $0 }) else { return nil }
        return lists.withLock { lists -> UnsafeMutableRawPointer? in
            if lists.disabled { return nil }
            if lists.slots[index].isEmpty {
                let bytes = lists.nextChunkSize[index]
                guard let chunk = mapChunk(bytes) else {
                    lists.disabled = true
                    return nil
                }
                lists.nextChunkSize[index] = chunkSize(after: bytes)
                let size = slotSizes[index]
                // Highest offset first: popLast hands out the chunk from its start.
                for offset in stride(from: bytes - size, through: 0, by: -size) {
                    lists.slots[index].append(Slot(address: chunk + offset))
                }
            }
            return lists.slots[index].popLast()?.address
        }
    }

    /// Returns a slot (already zeroed by the caller) of the size class for `count`.
    static func release(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard let index = slotSizes.firstIndex(where: { count <= $0 }) else { return }
        let slot = Slot(address: pointer)
        lists.withLock { $0.slots[index].append(slot) }
    }

    /// Maps, locks and excludes from core dumps one chunk of `chunkSize` bytes. The
    /// corresponding C functions are `mmap`, `mlock` and `madvise(MADV_DONTDUMP)`.
    private static func mapChunk(_ chunkSize: Int) -> UnsafeMutableRawPointer? {
        guard let raw = mmap(nil, chunkSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            raw != MAP_FAILED
        else { return nil }
        guard mlock(raw, chunkSize) == 0 else {
            munmap(raw, chunkSize)
            return nil
        }
        // No secrets in core files; a kernel that refuses only loses that.
        try? SecureZero.excludeFromCoreDumps(UnsafeMutableRawBufferPointer(start: raw, count: chunkSize))
        return raw
    }
}
