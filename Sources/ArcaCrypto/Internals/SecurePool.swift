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
///
/// The bookkeeping holds no Swift collection: each class keeps the unused tail of
/// its newest chunk and a free list threaded through the released slots (a
/// released slot, already zeroed, holds the address of the next one in its first
/// word; `SecretBytes` zeroes the whole slot again when it hands it out). A fresh
/// process's first secret thus costs no generic metadata or array growth, only the
/// one chunk's `mmap`, `mlock` and `madvise`.
enum SecurePool {
    /// Slot sizes; a secret takes the smallest that fits.
    static let slotSizes = [64, 256, 1024, 4096]
    /// The first chunk of each size class: one page (a multiple of every slot size).
    static let firstChunkSize = 4096
    /// The largest chunk mapped at a time per size class.
    static let maxChunkSize = 256 * 1024

    /// One size class: where its next slot comes from. Every field starts at zero, on
    /// purpose: Swift 6.3.1 at -O drops the initial value of a global `Mutex` whose
    /// value is larger than six words and leaves it zero-filled (a 15-line program
    /// shows it), which once made the first chunk `mmap(0)` and turned the pool off.
    private struct SizeClass {
        /// The most recently released slot; each free slot's first word holds the next.
        var free: UnsafeMutableRawPointer?
        /// The part of the newest chunk never handed out yet.
        var unused: UnsafeMutableRawPointer?
        var unusedBytes = 0
        /// How many chunks the class has mapped (the next one's size follows).
        var chunks = 0
    }

    // @unchecked: raw pointers into the pool's chunks, only ever read or written under the lock.
    private struct FreeLists: @unchecked Sendable {
        // Four classes as four fields, not an array: see the type's comment.
        var class64 = SizeClass()
        var class256 = SizeClass()
        var class1024 = SizeClass()
        var class4096 = SizeClass()
        /// Set when mlock failed once: the pool then stays out of the way.
        var disabled = false

        /// The class of slots of `size` bytes (one of `slotSizes`).
        subscript(size: Int) -> SizeClass {
            get {
                switch size {
                case 64: class64
                case 256: class256
                case 1024: class1024
                default: class4096
                }
            }
            set {
                switch size {
                case 64: class64 = newValue
                case 256: class256 = newValue
                case 1024: class1024 = newValue
                default: class4096 = newValue
                }
            }
        }
    }

    private static let lists = Mutex(FreeLists())

    /// The size of a class's chunk number `index` (from 0): one page, doubling up to `maxChunkSize`.
    static func chunkSize(index: Int) -> Int { min(firstChunkSize << min(index, 16), maxChunkSize) }

    /// The slot size for `count` bytes, or nil if too large for the pool.
    static func slotSize(for count: Int) -> Int? {
        switch count {
        case ...64: 64
        case ...256: 256
        case ...1024: 1024
        case ...4096: 4096
        default: nil
        }
    }

    /// A slot of at least `count` bytes (its contents are not defined: the caller
    /// zeroes it), or nil (too large, or the pool is unavailable: the caller falls
    /// back to `sodium_malloc`).
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        guard let size = slotSize(for: count) else { return nil }
        return lists.withLock { lists -> UnsafeMutableRawPointer? in
            if lists.disabled { return nil }
            var sizeClass = lists[size]
            defer { lists[size] = sizeClass }
            if let slot = sizeClass.free {
                sizeClass.free = slot.load(as: UnsafeMutableRawPointer?.self)
                return slot
            }
            if sizeClass.unusedBytes < size {
                let bytes = chunkSize(index: sizeClass.chunks)
                guard let chunk = mapChunk(bytes) else {
                    lists.disabled = true
                    return nil
                }
                sizeClass.chunks += 1
                sizeClass.unused = chunk
                sizeClass.unusedBytes = bytes
            }
            guard let slot = sizeClass.unused else { return nil }
            sizeClass.unused = slot + size
            sizeClass.unusedBytes -= size
            return slot
        }
    }

    /// Returns a slot (already zeroed by the caller) of the size class for `count`.
    static func release(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard let size = slotSize(for: count) else { return }
        lists.withLock { lists in
            pointer.storeBytes(of: lists[size].free, as: UnsafeMutableRawPointer?.self)
            lists[size].free = pointer
        }
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
