#if canImport(Glibc)
    import Glibc
#endif

/// A hybrid logical clock reading: physical milliseconds since the epoch and a counter that
/// orders events within one millisecond (Kulkarni et al., 2014). Ordered by (wall, counter).
public struct HLCTimestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970 (the largest physical time this clock has seen).
    public var wallMillis: UInt64
    /// Orders events that share `wallMillis`.
    public var counter: UInt32

    /// A timestamp from its parts.
    public init(wallMillis: UInt64, counter: UInt32) {
        self.wallMillis = wallMillis
        self.counter = counter
    }

    public static func < (a: HLCTimestamp, b: HLCTimestamp) -> Bool {
        (a.wallMillis, a.counter) < (b.wallMillis, b.counter)
    }

    public var description: String { "\(wallMillis).\(counter)" }
}

/// Where the clock reads physical time. Injectable, so tests (and the skew integration
/// test, which static binaries make impossible to fake with LD_PRELOAD) control it.
public protocol ClockSource: Sendable {
    /// Milliseconds since 1970.
    func nowMillis() -> UInt64
}

/// The hybrid logical clock of one device. It never goes backwards, advances past every
/// clock it receives, and flags a received reading that is further ahead of local physical
/// time than `skewLimitMillis` (accepted, but reported).
public struct HybridLogicalClock: Sendable {
    /// 5 minutes: a record whose clock is further ahead is accepted and flagged.
    public static let defaultSkewLimitMillis: UInt64 = 5 * 60 * 1000

    /// The last reading given out or received.
    public private(set) var last: HLCTimestamp
    private let source: any ClockSource
    /// How far ahead of local physical time a received clock may be before it is flagged.
    public let skewLimitMillis: UInt64

    /// A clock reading `source`, starting after `last` (persisted across restarts).
    public init(
        source: any ClockSource, last: HLCTimestamp = HLCTimestamp(wallMillis: 0, counter: 0),
        skewLimitMillis: UInt64 = HybridLogicalClock.defaultSkewLimitMillis
    ) {
        self.source = source
        self.last = last
        self.skewLimitMillis = skewLimitMillis
    }

    /// A reading for a local event (a record this device writes).
    public mutating func now() -> HLCTimestamp {
        let physical = source.nowMillis()
        if physical > last.wallMillis {
            last = HLCTimestamp(wallMillis: physical, counter: 0)
        } else {
            advanceCounter()
        }
        return last
    }

    /// Merges a received reading; returns whether it was more than the skew limit ahead of
    /// local physical time (the record is still accepted).
    @discardableResult
    public mutating func receive(_ remote: HLCTimestamp) -> Bool {
        let physical = source.nowMillis()
        let maxWall = max(physical, last.wallMillis, remote.wallMillis)
        if maxWall == last.wallMillis && maxWall == remote.wallMillis {
            last = HLCTimestamp(wallMillis: maxWall, counter: max(last.counter, remote.counter))
            advanceCounter()
        } else if maxWall == last.wallMillis {
            advanceCounter()
        } else if maxWall == remote.wallMillis {
            last = remote
            advanceCounter()
        } else {
            last = HLCTimestamp(wallMillis: maxWall, counter: 0)
        }
        return remote.wallMillis > physical &+ skewLimitMillis
    }

    /// The physical time the clock reads now (milliseconds since 1970), without advancing it:
    /// what the horizon of tombstone collection is measured against.
    public func physicalMillis() -> UInt64 { source.nowMillis() }

    /// Moves the clock up to one of this device's own earlier readings (replaying its journal
    /// after a restart), so that it never hands out a reading below one it gave before.
    mutating func catchUp(to own: HLCTimestamp) {
        if own > last { last = own }
    }

    private mutating func advanceCounter() {
        if last.counter == .max {
            // 4 billion events in one millisecond: borrow the next millisecond rather than wrap.
            last = HLCTimestamp(wallMillis: last.wallMillis + 1, counter: 0)
        } else {
            last.counter += 1
        }
    }
}

/// The system's real-time clock.
public struct SystemClock: ClockSource {
    /// The system clock.
    public init() {}

    public func nowMillis() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(max(ts.tv_sec, 0)) * 1000 + UInt64(max(ts.tv_nsec, 0)) / 1_000_000
    }
}
