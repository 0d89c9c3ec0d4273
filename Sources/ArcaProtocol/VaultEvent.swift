/// Something that happened to a user's vault, whoever caused it: the per-user
/// event stream that lets `arca-secretd` emit D-Bus signals for changes made by
/// `arca` or any other client. Wire form: a u8 kind, then for item events the
/// reference (u32 length + bytes), for a lock change the ``LockClasses`` byte.
public enum VaultEvent: Sendable, Hashable {
    /// The classes loaded changed (unlock, lock, screen lock, idle timeout).
    case lockChanged(unlocked: LockClasses)
    /// An item was added.
    case itemAdded(reference: [UInt8])
    /// An item's attributes, label or secret changed.
    case itemChanged(reference: [UInt8])
    /// An item was deleted.
    case itemDeleted(reference: [UInt8])
    /// Items changed that arcad does not name one by one (a Keychain update or
    /// delete by query): the listener re-reads what it shows.
    case itemsChanged
    /// The user's sync outbox has new records, head or approvals (`arca-sync` pulls), or
    /// queued incoming files were applied.
    case syncChanged
}

/// The answer to ``Request/waitEvents(uid:after:timeoutMilliseconds:)``.
public struct EventBatch: Sendable, Hashable {
    /// The sequence number to wait after next time.
    public var next: UInt64
    /// Events were dropped between `after` and the first one here (the listener
    /// was too slow, or arcad restarted): re-read everything.
    public var missed: Bool
    /// The events after `after`, oldest first; empty when the wait timed out.
    public var events: [VaultEvent]

    /// A batch from its parts.
    public init(next: UInt64, missed: Bool, events: [VaultEvent]) {
        self.next = next
        self.missed = missed
        self.events = events
    }
}

extension WireWriter {
    mutating func eventBatch(_ batch: EventBatch) throws(ProtocolError) {
        u64(batch.next)
        bool(batch.missed)
        try list(batch.events, field: "events", limit: ProtocolLimits.maximumListCount) { w, e throws(ProtocolError) in
            switch e {
            case .lockChanged(let classes):
                w.u8(1)
                try w.lockClasses(classes)
            case .itemAdded(let ref):
                w.u8(2)
                try w.reference(ref)
            case .itemChanged(let ref):
                w.u8(3)
                try w.reference(ref)
            case .itemDeleted(let ref):
                w.u8(4)
                try w.reference(ref)
            case .itemsChanged: w.u8(5)
            case .syncChanged: w.u8(6)
            }
        }
    }
}

extension WireReader {
    mutating func eventBatch() throws(ProtocolError) -> EventBatch {
        let next = try u64()
        let missed = try bool(field: "missed")
        let events = try list(field: "events", limit: ProtocolLimits.maximumListCount) {
            r throws(ProtocolError) -> VaultEvent in
            switch try r.u8() {
            case 1: return .lockChanged(unlocked: try r.lockClasses())
            case 2: return .itemAdded(reference: try r.reference())
            case 3: return .itemChanged(reference: try r.reference())
            case 4: return .itemDeleted(reference: try r.reference())
            case 5: return .itemsChanged
            case 6: return .syncChanged
            case let other: throw .unknownTag(field: "event", value: UInt32(other))
            }
        }
        return EventBatch(next: next, missed: missed, events: events)
    }
}
