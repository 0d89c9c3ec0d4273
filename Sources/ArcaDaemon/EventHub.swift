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
    private var buffers: [UInt32: [(number: UInt64, event: VaultEvent)]] = [:]
    /// Per user, the number of the newest event dropped from the buffer.
    private var dropped: [UInt32: UInt64] = [:]
    private let start: UInt64

    init() {
        start = UInt64(max(0, Daemon.nowMicroseconds()))
        last = start
    }

    /// Records events of `uid` and wakes its listeners.
    func post(uid: UInt32, _ events: [VaultEvent]) {
        guard !events.isEmpty else { return }
        condition.withLock {
            var buffer = buffers[uid, default: []]
            for event in events {
                last += 1
                buffer.append((last, event))
            }
            if buffer.count > Self.capacity {
                let excess = buffer.count - Self.capacity
                dropped[uid] = buffer[excess - 1].number
                buffer.removeFirst(excess)
            }
            buffers[uid] = buffer
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
                if after < start || after > last || after < dropped[uid, default: 0] {
                    return EventBatch(next: last, missed: true, events: [])
                }
                let fresh = buffers[uid, default: []].filter { $0.number > after }
                if let newest = fresh.last {
                    return EventBatch(next: newest.number, missed: false, events: fresh.map(\.event))
                }
                if Clock.monotonicSeconds() >= deadline { return EventBatch(next: after, missed: false, events: []) }
                condition.wait(until: deadline)
            }
        }
    }
}
