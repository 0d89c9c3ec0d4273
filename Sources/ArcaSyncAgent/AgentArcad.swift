/// What the agent needs from arcad, as plain values: the seam between the agent's logic and
/// the socket (``ArcadSyncLink`` is the real one; tests use an in-memory twin).
public protocol AgentArcad: AnyObject {
    /// This device's id (32 bytes), or nil when sync is not set up for the user here.
    func deviceID() throws(SyncAgentError) -> [UInt8]?
    /// This device's own ciphertext after `after` (bounded per call; `more` says there is more).
    func pull(after: UInt64) throws(SyncAgentError) -> AgentOutbox
    /// Peers' files for arcad to verify and merge; one outcome per file, in order.
    func push(_ files: [AgentFile]) throws(SyncAgentError) -> [AgentOutcome]
    /// The last sequence number arcad has taken from each peer (hex id → seq).
    func appliedSeqs() throws(SyncAgentError) -> [String: UInt64]
    /// The files arcad holds waiting for a circle update now, and how many such files it has
    /// dropped as expired in all; nil from an arcad that does not say.
    func waitingFiles() throws(SyncAgentError) -> (waiting: UInt32, expired: UInt32)?
    /// Waits up to `timeoutMilliseconds` for a change of the user's vault or sync state after
    /// `after`; returns the position to wait after next time and whether anything happened.
    func wait(after: UInt64, timeoutMilliseconds: UInt32) throws(SyncAgentError) -> (next: UInt64, changed: Bool)
}

/// This device's outgoing ciphertext, as arcad hands it out.
public struct AgentOutbox: Sendable, Equatable {
    /// Records after the asked-for sequence number, ascending.
    public var records: [(seq: UInt64, bytes: [UInt8])]
    /// The signed head, if there is one.
    public var head: [UInt8]?
    /// Approvals this device signed: the approved device (hex) and the approval's bytes.
    public var approvals: [(device: String, bytes: [UInt8])]
    /// Whether more records follow (ask again after the last one).
    public var more: Bool
    /// The device's latest snapshot, if it published one.
    public var snapshot: [UInt8]?

    public init(
        records: [(seq: UInt64, bytes: [UInt8])], head: [UInt8]?, approvals: [(device: String, bytes: [UInt8])],
        more: Bool, snapshot: [UInt8]? = nil
    ) {
        self.records = records
        self.head = head
        self.approvals = approvals
        self.more = more
        self.snapshot = snapshot
    }

    public static func == (a: AgentOutbox, b: AgentOutbox) -> Bool {
        a.records.map(\.seq) == b.records.map(\.seq) && a.records.map(\.bytes) == b.records.map(\.bytes)
            && a.head == b.head && a.approvals.map(\.device) == b.approvals.map(\.device)
            && a.approvals.map(\.bytes) == b.approvals.map(\.bytes) && a.more == b.more && a.snapshot == b.snapshot
    }
}

/// One file of a peer's directory, handed to arcad.
public struct AgentFile: Sendable, Equatable {
    /// What the file is.
    public enum Kind: Sendable, Equatable {
        case record(seq: UInt64)
        case head
        case approval(device: String)
        case snapshot
    }
    public var kind: Kind
    /// The author's device id (hex): the directory the file is in.
    public var author: String
    public var bytes: [UInt8]

    public init(kind: Kind, author: String, bytes: [UInt8]) {
        self.kind = kind
        self.author = author
        self.bytes = bytes
    }
}

/// What arcad did with one pushed file.
public enum AgentOutcome: Sendable, Equatable {
    /// Verified and merged, or already known.
    case applied
    /// Verified as far as possible and kept by arcad until the vault unlocks.
    case queued
    /// Refused (forged, altered, rolled back, removed device...), with arcad's reason.
    case refused(String)
    /// Not applicable yet (a gap before it): the agent offers it again later.
    case notYet(String)
}
