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
/// word, XORed with a random cookie, and checked against the class's chunks before
/// it is followed; `SecretBytes` zeroes the whole slot again when it hands it out). A fresh
/// process's first secret thus costs no generic metadata or array growth, only the
/// one chunk's `mmap`, `mlock` and `madvise` (and one small `calloc` for the in-use bits).
///
/// A bit per slot says whether it is handed out: a release of a slot that is not (a
/// double release while the slot is still free) is refused and counted, and a free-list
/// link to a slot in use turns the pool off. Without it a slot released twice linked to
/// itself, and the next two secrets shared one buffer. A stale release after the slot was
/// handed out again is not detectable (its bit is set again): it frees the new owner's slot.
/// A refusal writes nothing (the pool runs inside PAM host processes, whose fd 2 is theirs):
/// ``refusedReleases`` counts them.
enum SecurePool {
    /// Slot sizes; a secret takes the smallest that fits.
    static let slotSizes = [64, 256, 1024, 4096]
    /// The first chunk of each size class: one page (a multiple of every slot size).
    static let firstChunkSize = 4096
    /// The largest chunk mapped at a time per size class.
    static let maxChunkSize = 256 * 1024

    /// The most chunks a size class maps (4 KiB doubling to 256 KiB: 764 KiB of slots);
    /// past them its secrets come from `sodium_malloc`. A fixed number, so that the
    /// chunk bases sit in fixed fields and a free-list link can be checked against them.
    static let maxChunks = 8

    /// One size class: where its next slot comes from. Every field starts at zero, on
    /// purpose (see ``FreeLists``).
    struct SizeClass {
        /// The most recently released slot; each free slot's first word holds the next,
        /// encoded (see ``FreeLists/cookie``).
        var free: UnsafeMutableRawPointer?
        /// The part of the newest chunk never handed out yet.
        var unused: UnsafeMutableRawPointer?
        var unusedBytes = 0
        /// How many chunks the class has mapped (the next one's size follows).
        var chunks = 0
        /// The chunks' base addresses, in the order mapped (the first `chunks` are set).
        var bases: (UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0, 0, 0, 0)

        func base(_ index: Int) -> UInt {
            withUnsafeBytes(of: bases) { $0.load(fromByteOffset: index * MemoryLayout<UInt>.stride, as: UInt.self) }
        }

        mutating func setBase(_ index: Int, _ address: UInt) {
            withUnsafeMutableBytes(of: &bases) {
                $0.storeBytes(of: address, toByteOffset: index * MemoryLayout<UInt>.stride, as: UInt.self)
            }
        }

        /// The index (from 0, across the class's chunks in order) of the slot of `size` bytes
        /// at `address`, if it is one this class has handed out: inside one of its chunks,
        /// on a slot boundary, and not in the newest chunk's never-used tail.
        func slotIndex(_ address: UInt, size: Int) -> Int? {
            guard address % UInt(size) == 0 else { return nil }
            let tail = unused.map { UInt(bitPattern: $0) } ?? .max
            var before = 0
            for index in 0..<min(chunks, SecurePool.maxChunks) {
                let base = base(index)
                let bytes = SecurePool.chunkSize(index: index)
                defer { before += bytes }
                guard address >= base, address - base < UInt(bytes) else { continue }
                guard (address - base) % UInt(size) == 0, index < chunks - 1 || address < tail else { return nil }
                return (before + Int(address - base)) / size
            }
            return nil
        }

        /// Whether `address` is the start of a slot this class has handed out (``slotIndex(_:size:)``).
        func owns(_ address: UInt, size: Int) -> Bool { slotIndex(address, size: size) != nil }
    }

    /// The pool's whole state. Every initial value is zero, on purpose: Swift 6.3.1 at
    /// -O drops the initial value of a global `Mutex` whose value is larger than six
    /// words and leaves it zero-filled. Reproduction (two files, `swiftc -O a.swift main.swift`;
    /// prints 0, and 7 at -Onone or with six fields):
    ///
    ///     // a.swift
    ///     import Synchronization
    ///     struct S { var a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7 }
    ///     enum Pool { static let m = Mutex(S()); static func g() -> Int { m.withLock { $0.g } } }
    ///     // main.swift
    ///     print(Pool.g())
    ///
    /// (it once made the first chunk `mmap(0)` and turned the pool off). So a field that
    /// needs another start (the cookie) is set lazily, and `SecretBytesTests` checks
    /// that `FreeLists()` is all zero bytes.
    // @unchecked: raw pointers into the pool's chunks, only ever read or written under the lock.
    struct FreeLists: @unchecked Sendable {
        // Four classes as four fields, not an array: see the type's comment.
        var class64 = SizeClass()
        var class256 = SizeClass()
        var class1024 = SizeClass()
        var class4096 = SizeClass()
        /// What every free-list link is XORed with (glibc's safe-linking): a random word
        /// drawn at the first release, so a link written over a released slot (a use
        /// after free, an overflow from the slot before) decodes to a random address,
        /// which `allocate` refuses instead of handing out.
        var cookie: UInt = 0
        var hasCookie = false
        /// Set when mlock failed once, or a free-list link did not check out: the pool
        /// then stays out of the way.
        var disabled = false
        /// One bit per slot of every class, set while the slot is handed out (`inUseBitOffset`
        /// gives each class's first bit); allocated with the first chunk. A release of a slot
        /// whose bit is clear (a double release, or an address the pool never handed out) is
        /// refused: linked in twice, a slot would point at itself and two later secrets would
        /// share it.
        var inUse: UnsafeMutablePointer<UInt64>?
        /// Releases refused that way.
        var refusedReleases = 0

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

        /// A slot of `size` bytes (one of `slotSizes`), all zero if every release was of a
        /// zeroed slot; or nil (the pool is off, or the class has all its chunks in use).
        mutating func allocate(size: Int) -> UnsafeMutableRawPointer? {
            if disabled { return nil }
            var sizeClass = self[size]
            defer { self[size] = sizeClass }
            if let slot = sizeClass.free {
                let next = slot.load(as: UInt.self) ^ cookie
                // A free slot is never in use, nor its successor (a cycle, a forged link).
                guard let index = sizeClass.slotIndex(UInt(bitPattern: slot), size: size), !isInUse(size, index),
                    next == 0 || sizeClass.slotIndex(next, size: size).map({ !isInUse(size, $0) }) == true
                else {
                    disabled = true
                    return nil
                }
                sizeClass.free = UnsafeMutableRawPointer(bitPattern: next)
                // The rest of the slot was zeroed on release; the link goes too.
                slot.storeBytes(of: 0, as: UInt.self)
                setInUse(size, index, true)
                return slot
            }
            if sizeClass.unusedBytes < size {
                guard sizeClass.chunks < SecurePool.maxChunks else { return nil }
                let bytes = SecurePool.chunkSize(index: sizeClass.chunks)
                if inUse == nil {
                    // Bits only, no secret: ordinary memory. One allocation for every class.
                    inUse = calloc(SecurePool.inUseWords, MemoryLayout<UInt64>.size)?
                        .bindMemory(to: UInt64.self, capacity: SecurePool.inUseWords)
                }
                guard inUse != nil, let chunk = SecurePool.mapChunk(bytes) else {
                    disabled = true
                    return nil
                }
                sizeClass.setBase(sizeClass.chunks, UInt(bitPattern: chunk))
                sizeClass.chunks += 1
                sizeClass.unused = chunk
                sizeClass.unusedBytes = bytes
            }
            guard let slot = sizeClass.unused else { return nil }
            sizeClass.unused = slot + size
            sizeClass.unusedBytes -= size
            if let index = sizeClass.slotIndex(UInt(bitPattern: slot), size: size) { setInUse(size, index, true) }
            return slot
        }

        /// Puts a slot (already zeroed) of `size` bytes on its class's free list; false (the
        /// list untouched, the slot left out of use) when the slot is not handed out: a double
        /// release, or an address the pool never gave.
        @discardableResult
        mutating func release(_ pointer: UnsafeMutableRawPointer, size: Int) -> Bool {
            guard let index = self[size].slotIndex(UInt(bitPattern: pointer), size: size), isInUse(size, index)
            else {
                refusedReleases += 1
                return false
            }
            if !hasCookie {
                guard let random = SecurePool.randomWord() else {
                    // No randomness: keep the slot out of use rather than link it in the clear.
                    disabled = true
                    return true
                }
                cookie = random
                hasCookie = true
            }
            setInUse(size, index, false)
            pointer.storeBytes(of: UInt(bitPattern: self[size].free) ^ cookie, as: UInt.self)
            self[size].free = pointer
            return true
        }

        /// Whether slot `index` of the class of `size` bytes is handed out.
        func isInUse(_ size: Int, _ index: Int) -> Bool {
            guard let inUse else { return false }
            let bit = SecurePool.inUseBitOffset(size) + index
            return inUse[bit / 64] & (1 << UInt64(bit % 64)) != 0
        }

        func setInUse(_ size: Int, _ index: Int, _ value: Bool) {
            guard let inUse else { return }
            let bit = SecurePool.inUseBitOffset(size) + index
            if value {
                inUse[bit / 64] |= 1 << UInt64(bit % 64)
            } else {
                inUse[bit / 64] &= ~(1 << UInt64(bit % 64))
            }
        }
    }

    private static let lists = Mutex(FreeLists())

    /// The bytes of slots a class can map: all of its `maxChunks` chunks.
    static let classBytes = (0..<maxChunks).reduce(0) { $0 + chunkSize(index: $1) }

    /// The first in-use bit of the class of `size` bytes: the classes' slot counts, in `slotSizes`' order.
    static func inUseBitOffset(_ size: Int) -> Int {
        switch size {
        case 64: 0
        case 256: classBytes / 64
        case 1024: classBytes / 64 + classBytes / 256
        default: classBytes / 64 + classBytes / 256 + classBytes / 1024
        }
    }

    /// The 64-bit words of the in-use bits of every class (254: 16,235 slots).
    static let inUseWords = (inUseBitOffset(4096) + classBytes / 4096 + 63) / 64

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
        return lists.withLock { $0.allocate(size: size) }
    }

    /// Returns a slot (already zeroed by the caller) of the size class for `count`.
    static func release(_ pointer: UnsafeMutableRawPointer, count: Int) {
        guard let size = slotSize(for: count) else { return }
        // A refusal (a bug in the caller, never input) is only counted: the slot stays out.
        lists.withLock { _ = $0.release(pointer, size: size) }
    }

    /// Releases refused since the process started (a double release, a foreign address).
    static var refusedReleases: Int { lists.withLock { $0.refusedReleases } }

    /// A random word from the kernel (not libsodium's, whose `sodium_init` `arca get`
    /// would otherwise pay for at its first release), or nil.
    static func randomWord() -> UInt? { KernelRandom.word() }

    /// Maps, locks and excludes from core dumps one chunk of `chunkSize` bytes. The
    /// corresponding C functions are `mmap`, `mlock` and `madvise(MADV_DONTDUMP)`.
    static func mapChunk(_ chunkSize: Int) -> UnsafeMutableRawPointer? {
        guard let raw = Heap.mapPages(chunkSize) else { return nil }
        guard mlock(raw, chunkSize) == 0 else {
            munmap(raw, chunkSize)
            return nil
        }
        // No secrets in core files; a kernel that refuses only loses that.
        try? SecureZero.excludeFromCoreDumps(UnsafeMutableRawBufferPointer(start: raw, count: chunkSize))
        return raw
    }
}
