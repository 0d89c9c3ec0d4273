import ArcaCrypto
import Testing

@testable import ArcaSync

/// A head's time (issue 17, review of the horizon work): it never goes back at an announced
/// sequence number (an old copy replayed would make its author look dormant), a head far ahead
/// of this device's clock keeps no time, and a device's own head carries its physical time,
/// not its hybrid clock (which adopts any peer's clock, however far ahead).
@Suite struct HeadTimeTests {
    static let horizon: UInt64 = 10_000
    static let start: UInt64 = 1_000_000

    /// A, B, C with a 10 s horizon; everyone has seen every head at `start`.
    private func circle() throws -> [TestDevice] {
        var d = Fixture.circle(3, start: Self.start)
        for i in 0..<3 { d[i].replica.horizonMillis = Self.horizon }
        let heads = try d.map { try $0.replica.head().bytes }
        for i in 0..<3 { for j in 0..<3 where j != i { try d[i].replica.observe(head: heads[j]) } }
        return d
    }

    @Test func anOldCopyOfAHeadAtTheSameSequenceKeepsNoTimeAndIsReported() throws {
        var d = try circle()
        d[1].clock.set(Self.start + 5_000)
        let old = try d[1].replica.head().bytes
        d[1].clock.set(Self.start + 12_500)
        let fresh = try d[1].replica.head().bytes
        d[0].clock.set(Self.start + 12_500)
        #expect(try d[0].replica.observe(head: fresh) == true)
        #expect(d[0].replica.headMillis(of: d[1].id) == Self.start + 12_500)
        #expect(try d[0].replica.observe(head: old) == false)
        #expect(d[0].replica.reports == [.headTimeBack(d[1].id, seen: Self.start + 12_500, got: Self.start + 5_000)])
        #expect(d[0].replica.headMillis(of: d[1].id) == Self.start + 12_500)
        // C's head at +20 s: B is not dormant to A, whose last head of B says +12.5 s (+5 s would).
        d[2].clock.set(Self.start + 20_000)
        d[0].clock.set(Self.start + 20_000)
        try d[0].replica.observe(head: d[2].replica.head().bytes)
        #expect(d[0].replica.dormantMembers == [])
        // The same head again (same time) is accepted: nothing went back.
        #expect(try d[0].replica.observe(head: fresh) == true)
    }

    @Test func aHeadMoreThanTheSkewLimitAheadIsFlaggedAndItsTimeNotKept() throws {
        var d = try circle()
        let skew = d[0].replica.clock.skewLimitMillis
        #expect(skew == 300_000)
        d[2].clock.set(Self.start + 5_000 + skew + 10_000)
        let ahead = try d[2].replica.head().bytes
        let aheadTime = try SignedHead(parsing: ahead).wallMillis
        #expect(aheadTime == Self.start + 5_000 + skew + 10_000)
        d[0].clock.set(Self.start + 5_000)
        #expect(try d[0].replica.observe(head: ahead) == false)
        #expect(d[0].replica.headMillis(of: d[2].id) == Self.start)
        #expect(d[0].replica.reports == [.headAhead(d[2].id, wallMillis: aheadTime)])
        // Within the skew limit: kept.
        d[2].clock.set(Self.start + 5_000 + skew)
        #expect(try d[0].replica.observe(head: d[2].replica.head().bytes) == true)
        #expect(d[0].replica.headMillis(of: d[2].id) == Self.start + 5_000 + skew)
    }

    @Test func aDevicesHeadCarriesItsPhysicalTimeNotAPeersFutureClock() throws {
        var d = try circle()
        // C's clock says 2099; its record carries that time, and A's hybrid clock adopts it.
        let future: UInt64 = 4_070_908_800_000
        d[2].clock.set(future)
        let (_, record) = try d[2].replica.create(Fixture.body("from the future", "s"))
        d[0].clock.set(Self.start + 5_000)
        try d[0].replica.apply(record.bytes)
        #expect(d[0].replica.clock.last.wallMillis == future)
        // A's head: its own physical time, rounded down to an eighth of the horizon.
        #expect(try SignedHead(parsing: d[0].replica.head().bytes).wallMillis == Self.start + 5_000)
        #expect(d[0].replica.headWallMillis == Self.start + 5_000)
    }
}
