import Testing

@testable import ArcaSync

@Suite struct HybridLogicalClockTests {
    @Test func localEventsNeverGoBackwards() {
        let source = ManualClock(1000)
        var hlc = HybridLogicalClock(source: source)
        #expect(hlc.now() == HLCTimestamp(wallMillis: 1000, counter: 0))
        #expect(hlc.now() == HLCTimestamp(wallMillis: 1000, counter: 1))
        source.set(900)  // the wall clock stepped back
        #expect(hlc.now() == HLCTimestamp(wallMillis: 1000, counter: 2))
        source.set(1500)
        #expect(hlc.now() == HLCTimestamp(wallMillis: 1500, counter: 0))
    }

    @Test func receiveAdvancesPastTheRemoteClock() {
        let source = ManualClock(1500)
        var hlc = HybridLogicalClock(source: source, last: HLCTimestamp(wallMillis: 1500, counter: 0))
        #expect(hlc.receive(HLCTimestamp(wallMillis: 2000, counter: 5)) == false)
        #expect(hlc.last == HLCTimestamp(wallMillis: 2000, counter: 6))
        #expect(hlc.now() == HLCTimestamp(wallMillis: 2000, counter: 7))
    }

    @Test func receiveWithEqualWallTakesTheLargerCounter() {
        var hlc = HybridLogicalClock(source: ManualClock(900), last: HLCTimestamp(wallMillis: 1000, counter: 3))
        hlc.receive(HLCTimestamp(wallMillis: 1000, counter: 7))
        #expect(hlc.last == HLCTimestamp(wallMillis: 1000, counter: 8))
    }

    @Test func receiveOfAnOlderClockStillTicks() {
        var hlc = HybridLogicalClock(source: ManualClock(100), last: HLCTimestamp(wallMillis: 5000, counter: 2))
        hlc.receive(HLCTimestamp(wallMillis: 4000, counter: 9))
        #expect(hlc.last == HLCTimestamp(wallMillis: 5000, counter: 3))
    }

    @Test func physicalTimeAheadOfBothResetsTheCounter() {
        var hlc = HybridLogicalClock(source: ManualClock(9000), last: HLCTimestamp(wallMillis: 5000, counter: 2))
        hlc.receive(HLCTimestamp(wallMillis: 4000, counter: 9))
        #expect(hlc.last == HLCTimestamp(wallMillis: 9000, counter: 0))
    }

    @Test func aClockMoreThanFiveMinutesAheadIsFlagged() {
        var hlc = HybridLogicalClock(source: ManualClock(1_000_000))
        #expect(hlc.receive(HLCTimestamp(wallMillis: 1_300_000, counter: 0)) == false)  // exactly 5 min
        #expect(hlc.receive(HLCTimestamp(wallMillis: 1_300_001, counter: 0)) == true)
        #expect(hlc.last == HLCTimestamp(wallMillis: 1_300_001, counter: 1))
    }

    @Test func counterOverflowBorrowsTheNextMillisecond() {
        var hlc = HybridLogicalClock(source: ManualClock(10), last: HLCTimestamp(wallMillis: 10, counter: .max))
        #expect(hlc.now() == HLCTimestamp(wallMillis: 11, counter: 0))
    }
}
