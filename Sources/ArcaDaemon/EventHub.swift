import ArcaCrypto
import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The per-user event streams (ARCHITECTURE §11): every change to a vault, from
/// any client, is numbered and kept in a bounded buffer; a listener long-polls
/// with the number it saw last. Numbers start at arcad's start time in
/// microseconds, so a listener that outlives an arcad restart is told it missed
/// events instead of silently skipping them.
// @unchecked: the mutable state is touched only while `condition` is held.
final class EventHub: @unchecked Sendable {
    /// Events kept per user; a listener further behind is told `missed`.
    static let capacity = 4096

    private let condition = Condition()
    // Guarded by `condition`.
    private var last: UInt64
    private var buffers: [UInt32: EventBuffer] = [:]
    private let start: UInt64

    init() {
        start = UInt64(max(0, Daemon.nowMicroseconds()))
        last = start
    }

    /// Records events of `uid` and wakes its listeners.
    func post(uid: UInt32, _ events: [VaultEvent]) {
        guard !events.isEmpty else { return }
        condition.withLock {
            // Changed in place: a copy of a full buffer per post made every add cost
            // thousands of retains once a vault had seen `capacity` events.
            for event in events {
                last += 1
                buffers[uid, default: EventBuffer()].append(number: last, event, capacity: Self.capacity)
            }
            condition.broadcast()
        }
    }

    /// Events of `uid` numbered after `after`, waiting up to `milliseconds` for
    /// the first. `after == 0` asks for the current number only.
    func wait(uid: UInt32, after: UInt64, milliseconds: UInt32) -> EventBatch {
        let deadline = Clock.monotonicSeconds() + Double(milliseconds) / 1000
        return condition.withLock {
            while true {
                // A number from before this arcad started, or from the future, or
                // older than what the buffer still holds: the listener re-reads.
                if after == 0 { return EventBatch(next: last, missed: false, events: []) }
                if after < start || after > last || after < buffers[uid]?.dropped ?? 0 {
                    return EventBatch(next: last, missed: true, events: [])
                }
                if let fresh = buffers[uid]?.events(after: after), let newest = fresh.last {
                    return EventBatch(next: newest.number, missed: false, events: fresh.map(\.event))
                }
                if Clock.monotonicSeconds() >= deadline { return EventBatch(next: after, missed: false, events: []) }
                condition.wait(until: deadline)
            }
        }
    }
}

/// One user's newest events, oldest first, numbered in increasing order. Events
/// past the capacity are dropped from the front in chunks (amortised constant
/// time per event); the listener sees exactly the newest `capacity`.
struct EventBuffer {
    private var entries: [(number: UInt64, event: VaultEvent)] = []
    /// Index of the oldest event still held.
    private var head = 0
    /// The number of the newest event dropped (0: none).
    private(set) var dropped: UInt64 = 0

    mutating func append(number: UInt64, _ event: VaultEvent, capacity: Int) {
        entries.append((number, event))
        if entries.count - head > capacity {
            dropped = entries[head].number
            head += 1
        }
        if head >= capacity {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// The events numbered after `after`, found by binary search (numbers increase).
    func events(after: UInt64) -> ArraySlice<(number: UInt64, event: VaultEvent)> {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].number > after { high = middle } else { low = middle + 1 }
        }
        return entries[low...]
    }
}
