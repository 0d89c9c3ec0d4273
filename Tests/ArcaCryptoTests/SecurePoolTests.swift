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
}
