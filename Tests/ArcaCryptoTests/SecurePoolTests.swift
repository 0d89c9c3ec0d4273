import Testing

@testable import ArcaCrypto

/// The pool's free lists, on pool states of the tests' own (`SecurePool.FreeLists`), so
/// that addresses are exact and no other test running in parallel takes a slot between.
@Suite("SecurePool")
struct SecurePoolTests {
    @Test("the pool's state starts as all zero bytes (Swift 6.3.1 -O zero-fills a global Mutex of over six words)")
    func stateStartsZero() {
        let bytes = withUnsafeBytes(of: SecurePool.FreeLists()) { Array($0) }
        #expect(bytes.count == MemoryLayout<SecurePool.FreeLists>.size)
        #expect(bytes.count > 6 * MemoryLayout<Int>.size)
        #expect(bytes.allSatisfy { $0 == 0 })
    }

    /// A slot from `lists`; fails the test if there is none.
    static func slot(_ lists: inout SecurePool.FreeLists, _ size: Int) throws -> UnsafeMutableRawPointer {
        let slot = lists.allocate(size: size)
        return try #require(slot)
    }

    static func slots(
        _ lists: inout SecurePool.FreeLists, _ size: Int, count: Int
    ) throws -> [UnsafeMutableRawPointer] {
        var slots: [UnsafeMutableRawPointer] = []
        for _ in 0..<count { slots.append(try slot(&lists, size)) }
        return slots
    }

    /// Two slots taken and released, first then second (so the list is second → first).
    static func twoReleased(
        _ lists: inout SecurePool.FreeLists, _ size: Int
    ) throws -> (UnsafeMutableRawPointer, UnsafeMutableRawPointer) {
        let (first, second) = (try slot(&lists, size), try slot(&lists, size))
        lists.release(first, size: size)
        lists.release(second, size: size)
        return (first, second)
    }

    static func isZero(_ slot: UnsafeMutableRawPointer, _ size: Int) -> Bool {
        UnsafeRawBufferPointer(start: slot, count: size).allSatisfy { $0 == 0 }
    }

    @Test(
        "64 slots of a class: distinct, aligned, zero; released and taken again, the same 64, zero",
        arguments: SecurePool.slotSizes)
    func releasedSlotsComeBack(size: Int) throws {
        var lists = SecurePool.FreeLists()
        let slots = try Self.slots(&lists, size, count: 64)
        let addresses = slots.map { UInt(bitPattern: $0) }
        #expect(Set(addresses).count == 64)
        #expect(addresses.allSatisfy { $0 % UInt(size) == 0 })
        #expect(slots.allSatisfy { Self.isZero($0, size) })
        for slot in slots {
            // As SecretBytes does: written, zeroed, released.
            slot.initializeMemory(as: UInt8.self, repeating: 0xA5, count: size)
            slot.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            lists.release(slot, size: size)
        }
        #expect(lists.hasCookie)
        let again = try Self.slots(&lists, size, count: 64)
        // Last in, first out: the slot released last comes back first.
        #expect(again.first == slots.last)
        #expect(Set(again.map { UInt(bitPattern: $0) }) == Set(addresses))
        // A link word left in a slot would show here.
        #expect(again.allSatisfy { Self.isZero($0, size) })
        #expect(!lists.disabled)
    }

    @Test("a released slot's link is stored XORed with the cookie, never as the plain address")
    func linksAreEncoded() throws {
        var lists = SecurePool.FreeLists()
        let (first, second) = try Self.twoReleased(&lists, 64)
        let stored = second.load(as: UInt.self)
        #expect(stored == UInt(bitPattern: first) ^ lists.cookie)
        #expect(stored != UInt(bitPattern: first))
        #expect(first.load(as: UInt.self) == lists.cookie)  // the end of the list
    }

    /// An attacker who can write a released slot (a use after free, an overflow from the
    /// slot before) sets its link to an address of their choosing. Before safe-linking
    /// and the check, `allocate` returned that slot and then the forged address as the
    /// next secret's storage. Now the pool turns itself off instead.
    @Test(
        "a forged free-list link is refused: the pool turns off and hands out nothing",
        arguments: ["plain address elsewhere", "encoded, misaligned", "encoded, unused tail", "encoded, other class"])
    func forgedLinkIsRefused(forgery: String) throws {
        var lists = SecurePool.FreeLists()
        let (first, second) = try Self.twoReleased(&lists, 256)
        let other = try Self.slot(&lists, 64)
        var victim = [UInt8](repeating: 0, count: 256)
        let forged: UInt = victim.withUnsafeMutableBytes { victimBytes in
            switch forgery {
            case "plain address elsewhere": UInt(bitPattern: victimBytes.baseAddress)
            case "encoded, misaligned": (UInt(bitPattern: first) + 8) ^ lists.cookie
            case "encoded, unused tail": (UInt(bitPattern: second) + 256) ^ lists.cookie
            default: UInt(bitPattern: other) ^ lists.cookie
            }
        }
        second.storeBytes(of: forged, as: UInt.self)
        #expect(lists.allocate(size: 256) == nil)
        #expect(lists.disabled)
        #expect(lists.allocate(size: 256) == nil)
        #expect(lists.allocate(size: 64) == nil)
        withExtendedLifetime(victim) {}
    }

    @Test("an intact encoded link is followed")
    func intactLinkIsFollowed() throws {
        var lists = SecurePool.FreeLists()
        let (first, second) = try Self.twoReleased(&lists, 1024)
        #expect(lists.allocate(size: 1024) == second)
        #expect(lists.allocate(size: 1024) == first)
        #expect(!lists.disabled)
    }

    @Test("a class maps at most maxChunks chunks, then leaves its secrets to sodium_malloc")
    func chunksAreBounded() {
        var lists = SecurePool.FreeLists()
        let perClass = (0..<SecurePool.maxChunks).reduce(0) { $0 + SecurePool.chunkSize(index: $1) } / 4096
        var count = 0
        while lists.allocate(size: 4096) != nil { count += 1 }
        #expect(count == perClass)
        #expect(lists.class4096.chunks == SecurePool.maxChunks)
        #expect(!lists.disabled)
    }

    /// `lists.release`, outside `#expect` (which cannot take an inout).
    func release(_ lists: inout SecurePool.FreeLists, _ slot: UnsafeMutableRawPointer, size: Int) -> Bool {
        lists.release(slot, size: size)
    }

    /// A slot released twice used to be linked in twice: the second release stored the list's
    /// head (the slot itself) in its link, the next allocation handed it out and left it at the
    /// head, and the one after handed it out again: two secrets in one buffer.
    @Test(
        "a double release is refused and the list stays whole: the next two allocations get distinct slots",
        arguments: SecurePool.slotSizes)
    func doubleReleaseIsRefused(size: Int) throws {
        var lists = SecurePool.FreeLists()
        let (first, second) = (try Self.slot(&lists, size), try Self.slot(&lists, size))
        let released1 = release(&lists, first, size: size)
        #expect(released1)
        let released2 = release(&lists, first, size: size)
        #expect(!released2)
        #expect(lists.refusedReleases == 1)
        let (a, b) = (try Self.slot(&lists, size), try Self.slot(&lists, size))
        #expect(a == first)
        #expect(a != b)
        #expect(b != second)
        #expect(!lists.disabled)
        // A, B, A: a release of the head's successor once more is refused as well.
        let released3 = release(&lists, a, size: size)
        #expect(released3)
        let released4 = release(&lists, second, size: size)
        #expect(released4)
        let released5 = release(&lists, a, size: size)
        #expect(!released5)
        #expect(lists.refusedReleases == 2)
        let again = try Self.slots(&lists, size, count: 3)
        #expect(Set(again.map { UInt(bitPattern: $0) }).count == 3)
        #expect(again[0] == second && again[1] == first)
        #expect(!lists.disabled)
    }

    @Test("the process-wide pool counts a refused release (and writes nothing: it may run inside a PAM host)")
    func processPoolCountsARefusal() throws {
        var elsewhere = [UInt8](repeating: 0, count: 64)
        let foreign = try #require(elsewhere.withUnsafeMutableBytes { $0.baseAddress })
        let before = SecurePool.refusedReleases
        SecurePool.release(foreign, count: 64)
        #expect(SecurePool.refusedReleases == before + 1)
        #expect(elsewhere == [UInt8](repeating: 0, count: 64))  // no link written into it
    }

    @Test("a release of an address the pool never handed out is refused, the list untouched")
    func foreignReleaseIsRefused() throws {
        var lists = SecurePool.FreeLists()
        let slot = try Self.slot(&lists, 64)
        var elsewhere = [UInt8](repeating: 0, count: 64)
        let foreign = try #require(elsewhere.withUnsafeMutableBytes { $0.baseAddress })
        let refused = release(&lists, foreign, size: 64)
        #expect(!refused)
        // The never-used tail of the chunk, and a slot of another class.
        let released6 = release(&lists, slot + 64, size: 64)
        #expect(!released6)
        let released7 = release(&lists, slot, size: 256)
        #expect(!released7)
        #expect(lists.refusedReleases == 3)
        #expect(lists.class64.free == nil && lists.class256.free == nil)
        let released8 = release(&lists, slot, size: 64)
        #expect(released8)
        #expect(lists.allocate(size: 64) == slot)
    }

    @Test("the in-use bits cover every slot of every class, each class's range after the previous one")
    func inUseBitsCoverEverySlot() {
        let counts = SecurePool.slotSizes.map { SecurePool.classBytes / $0 }
        #expect(counts == [12_224, 3_056, 764, 191])
        #expect(SecurePool.slotSizes.map(SecurePool.inUseBitOffset) == [0, 12_224, 15_280, 16_044])
        #expect(SecurePool.inUseWords == 254)
    }
}
