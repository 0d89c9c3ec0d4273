import ArcaProtocol
import Testing

@testable import ArcaSecretService

/// The metadata cache stays within its limit however many items pass through it
/// (CreateItem once cached every item it made: 10,000 of them held 6 MB).
@Suite struct ItemCacheTests {
    static func item(_ n: Int) -> AttributeItemInfo {
        AttributeItemInfo(
            reference: [UInt8(n >> 8), UInt8(n & 0xff)] + Array(repeating: 7, count: 14), label: "item \(n)",
            attributes: ["n": String(n)], contentType: "text/plain", created: 1, modified: 2,
            accessible: .afterFirstUnlock)
    }

    static func id(_ n: Int) -> String { ReferenceText.encode(item(n).reference) }

    @Test func oneAtATimeItStartsOverAtTheLimit() {
        var cache = ItemCache(limit: 4)
        for n in 0..<4 { cache[Self.id(n)] = Self.item(n) }
        #expect(cache.count == 4)
        #expect(cache.takeStartedOver() == false)
        // Replacing a held entry is not growth.
        cache[Self.id(2)] = Self.item(2)
        #expect(cache.count == 4 && cache.takeStartedOver() == false)
        cache[Self.id(4)] = Self.item(4)
        #expect(cache.count == 1)
        #expect(cache[Self.id(4)]?.label == "item 4")
        #expect(cache[Self.id(0)] == nil)
        #expect(cache.takeStartedOver() == true)
        #expect(cache.takeStartedOver() == false)
        for n in 5..<10_000 { cache[Self.id(n)] = Self.item(n) }
        #expect(cache.count <= 4)
        #expect(cache[Self.id(9_999)]?.label == "item 9999")
    }

    @Test func aReplyIsHeldWhole() {
        var cache = ItemCache(limit: 4)
        for n in 0..<3 { cache[Self.id(n)] = Self.item(n) }
        cache.remember([Self.item(10), Self.item(11)])
        #expect(cache.count == 2)
        #expect(cache[Self.id(10)] != nil && cache[Self.id(11)] != nil)
        #expect(cache.takeStartedOver() == true)
        cache.remember([Self.item(12), Self.item(13)])
        #expect(cache.count == 4 && cache.takeStartedOver() == false)
        cache[Self.id(12)] = nil
        #expect(cache.count == 3)
        cache.removeAll()
        #expect(cache.count == 0 && cache.takeStartedOver() == false)
    }
}
