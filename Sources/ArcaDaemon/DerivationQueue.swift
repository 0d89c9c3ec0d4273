/// Who may run an Argon2id derivation next: the pure scheduling rule of
/// ``DerivationQueue``, with no threads and no clock, so that it is tested alone.
///
/// At most `slots` derivations run at once daemon-wide and at most one per uid.
/// Waiting uids take turns round-robin: a uid waits in line once, however many
/// requests it queued; when its derivation ends, its next request goes to the
/// back of the line. So a uid's request waits for at most one derivation of each
/// uid ahead of it, and one user's flood never starves another user. A uid may
/// keep at most `waitingPerUID` requests waiting; more are refused (only that
/// uid's, and only while it already floods).
struct DerivationSchedule: Sendable {
    /// A place in the queue.
    typealias Ticket = UInt64

    let slots: Int
    let waitingPerUID: Int
    /// The uid of each running ticket.
    private(set) var running: [Ticket: UInt32] = [:]
    /// Tickets granted a slot whose waiter has not yet taken it up (counted as running).
    private var granted: Set<Ticket> = []
    /// Each uid's waiting tickets, oldest first.
    private var waiting: [UInt32: [Ticket]] = [:]
    /// Uids with waiting tickets and none running, in turn order.
    private var line: [UInt32] = []
    private var nextTicket: Ticket = 1

    init(slots: Int, waitingPerUID: Int) {
        self.slots = max(1, slots)
        self.waitingPerUID = max(1, waitingPerUID)
    }

    /// Queues a request of `uid`; nil when the uid already has `waitingPerUID` waiting.
    mutating func enqueue(uid: UInt32) -> Ticket? {
        guard waiting[uid, default: []].count < waitingPerUID else { return nil }
        let ticket = nextTicket
        nextTicket += 1
        waiting[uid, default: []].append(ticket)
        if !isRunning(uid), !line.contains(uid) { line.append(uid) }
        grant()
        return ticket
    }

    /// Whether `ticket` may run now; the first true answer takes the grant.
    mutating func take(_ ticket: Ticket) -> Bool {
        granted.remove(ticket) != nil
    }

    /// The derivation of `ticket` ended; the next in line may start.
    mutating func finish(_ ticket: Ticket) {
        guard let uid = running.removeValue(forKey: ticket) else { return }
        granted.remove(ticket)
        if !(waiting[uid]?.isEmpty ?? true) { line.append(uid) }
        grant()
    }

    /// The number of requests waiting (not running), for tests and logs.
    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }

    private func isRunning(_ uid: UInt32) -> Bool { running.values.contains(uid) }

    /// Gives free slots to the uids at the front of the line.
    private mutating func grant() {
        while running.count < slots, !line.isEmpty {
            let uid = line.removeFirst()
            guard var tickets = waiting[uid], !tickets.isEmpty else { continue }
            let ticket = tickets.removeFirst()
            waiting[uid] = tickets.isEmpty ? nil : tickets
            running[ticket] = uid
            granted.insert(ticket)
        }
    }
}

/// arcad's Argon2id derivations (`unlockWithPassword`), queued fairly across
/// uids (``DerivationSchedule``): a caller blocks until its turn instead of being
/// refused because another user is busy.
final class DerivationQueue: Sendable {
    private let condition = Condition()
    // Only touched inside `condition.withLock`.
    nonisolated(unsafe) private var schedule: DerivationSchedule

    init(slots: Int, waitingPerUID: Int) {
        schedule = DerivationSchedule(slots: slots, waitingPerUID: waitingPerUID)
    }

    /// Runs `body` in `uid`'s turn and returns its result; the slot is free
    /// again as soon as `body` returns. Refused only when this uid already has
    /// too many requests waiting.
    func run<R>(uid: UInt32, _ body: () throws(HandlerError) -> R) throws(HandlerError) -> R {
        let ticket = condition.withLock { () -> DerivationSchedule.Ticket? in
            guard let ticket = schedule.enqueue(uid: uid) else { return nil }
            condition.broadcast()
            while !schedule.take(ticket) { condition.wait() }
            return ticket
        }
        guard let ticket else {
            throw HandlerError(.notAvailable, "arcad is busy deriving keys for this user; try again")
        }
        defer {
            condition.withLock {
                schedule.finish(ticket)
                condition.broadcast()
            }
        }
        return try body()
    }
}
