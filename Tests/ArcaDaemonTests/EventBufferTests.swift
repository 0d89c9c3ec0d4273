import ArcaProtocol
import Testing

@testable import ArcaDaemon

/// One user's event buffer: exactly the newest `capacity` events, the number of the
/// newest one dropped, and the events after a number found among them.
@Suite struct EventBufferTests {
    static func event(_ n: UInt64) -> VaultEvent { .itemAdded(reference: [UInt8(n & 0xff), UInt8(n >> 8)]) }

    @Test func holdsTheNewestCapacityEvents() {
        var buffer = EventBuffer()
        for n in UInt64(101)...110 { buffer.append(number: n, Self.event(n), capacity: 4) }
        #expect(buffer.dropped == 106)
        #expect(buffer.events(after: 106).map(\.number) == [107, 108, 109, 110])
        #expect(buffer.events(after: 0).map(\.number) == [107, 108, 109, 110])
        #expect(buffer.events(after: 108).map(\.event) == [Self.event(109), Self.event(110)])
        #expect(buffer.events(after: 110).isEmpty)
        #expect(buffer.events(after: 500).isEmpty)
        // Long runs: still the newest four, through the compactions.
        for n in UInt64(111)...10_000 { buffer.append(number: n, Self.event(n), capacity: 4) }
        #expect(buffer.dropped == 9_996)
        #expect(buffer.events(after: 9_996).map(\.number) == [9_997, 9_998, 9_999, 10_000])
    }

    @Test func nothingDroppedBelowCapacity() {
        var buffer = EventBuffer()
        #expect(buffer.events(after: 0).isEmpty)
        for n in UInt64(1)...3 { buffer.append(number: n * 2, Self.event(n), capacity: 4) }
        #expect(buffer.dropped == 0)
        #expect(buffer.events(after: 3).map(\.number) == [4, 6])
    }
}
