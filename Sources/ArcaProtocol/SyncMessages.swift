/// The payloads of the sync requests and replies (ARCHITECTURE §12, issue 17). Everything
/// here is ciphertext, signatures, ids or attributes: no secret crosses the socket in these
/// messages, so none of them needs wiping.

/// What a file of a device's folder is: one writer per file, so Syncthing never merges.
public enum SyncFileKind: UInt8, Sendable, Hashable, CaseIterable {
    /// `<author>/records/<seq>.rec`: one signed, sealed record.
    case record = 1
    /// `<author>/head`: the author's signed head.
    case head = 2
    /// `<author>/approvals/<device>`: the author's signed approval of (or circle update for) a device.
    case approval = 3
    /// `<author>/snapshot`: the author's latest signed, sealed snapshot (published when it
    /// collects tombstones; a device back from past the sync horizon resyncs from it).
    case snapshot = 4
}

/// A file handed to arcad by the agent (``Request/syncPush(uid:files:)``).
public struct SyncFile: Sendable, Hashable {
    /// What the file is.
    public var kind: SyncFileKind
    /// The device whose folder it came from (32 bytes).
    public var author: [UInt8]
    /// The file's bytes, as read.
    public var bytes: [UInt8]

    /// A file from its parts.
    public init(kind: SyncFileKind, author: [UInt8], bytes: [UInt8]) {
        self.kind = kind
        self.author = author
        self.bytes = bytes
    }
}

/// What arcad did with one pushed file.
public enum SyncFileOutcomeCode: UInt8, Sendable, Hashable, CaseIterable {
    /// Verified and merged (a record), checked (a head), accepted (an approval).
    case applied = 1
    /// Already had it: nothing changed.
    case duplicate = 2
    /// Kept by arcad until the vault is unlocked, an earlier record arrives, or a circle update
    /// names the file's author or key epoch (a new member's files can come before it).
    case queued = 3
    /// Refused (forged, altered, rolled back, from a removed device…): nothing changed.
    case refused = 4
    /// Not taken now (the queue of files waiting for an unlock or a circle update is full):
    /// nothing changed; offer it again later.
    case deferred = 5
}

/// The outcome of one pushed file, in the order pushed.
public struct SyncFileOutcome: Sendable, Hashable {
    /// What happened.
    public var code: SyncFileOutcomeCode
    /// Why, for a refusal (empty otherwise). Never a secret.
    public var message: String

    /// An outcome from its parts.
    public init(code: SyncFileOutcomeCode, message: String = "") {
        self.code = code
        self.message = message
    }
}

/// One of this device's own records.
public struct SyncOutboxRecord: Sendable, Hashable {
    /// The record's sequence number in this device's log (its file name).
    public var seq: UInt64
    /// The record's bytes.
    public var bytes: [UInt8]

    /// A record from its parts.
    public init(seq: UInt64, bytes: [UInt8]) {
        self.seq = seq
        self.bytes = bytes
    }
}

/// One of this device's approvals: of a new device, or a circle update (new member, new
/// epoch key after a removal) sealed to a member.
public struct SyncOutboxApproval: Sendable, Hashable {
    /// The device it is for (its file name, in hex).
    public var device: [UInt8]
    /// The signed approval.
    public var bytes: [UInt8]

    /// An approval from its parts.
    public init(device: [UInt8], bytes: [UInt8]) {
        self.device = device
        self.bytes = bytes
    }
}

/// The answer to ``Request/syncPull(uid:after:)``: what this device's folder should hold.
public struct SyncOutbox: Sendable, Hashable {
    /// This device's id.
    public var device: [UInt8]
    /// This device's records numbered after `after`, in order, as many as fit one reply.
    public var records: [SyncOutboxRecord]
    /// This device's signed head (rewrite the `head` file with it).
    public var head: [UInt8]
    /// Every approval this device currently publishes, one per device.
    public var approvals: [SyncOutboxApproval]
    /// More records follow: pull again after the last one here.
    public var more: Bool
    /// This device's latest snapshot (rewrite the `snapshot` file with it); empty when none.
    public var snapshot: [UInt8]

    /// An outbox from its parts.
    public init(
        device: [UInt8], records: [SyncOutboxRecord], head: [UInt8], approvals: [SyncOutboxApproval], more: Bool,
        snapshot: [UInt8] = []
    ) {
        self.device = device
        self.records = records
        self.head = head
        self.approvals = approvals
        self.more = more
        self.snapshot = snapshot
    }
}

/// The answer to ``Request/syncRemove(uid:device:)``.
public struct SyncRemoval: Sendable, Hashable {
    /// The new epoch, whose key the removed device never gets.
    public var epoch: UInt32
    /// The items the removed device may have read (their names, never their secrets).
    public var seenItems: [String]

    /// A removal from its parts.
    public init(epoch: UInt32, seenItems: [String]) {
        self.epoch = epoch
        self.seenItems = seenItems
    }
}

/// One device of the circle, as `arca sync status` shows it.
public struct SyncDeviceStatus: Sendable, Hashable {
    /// The device id.
    public var id: [UInt8]
    /// nil for a member; for a removed device, its last accepted sequence number.
    public var removedAfter: UInt64?
    /// The highest of its records applied here.
    public var applied: UInt64
    /// How many records its head announced that are not applied here yet.
    public var missing: UInt64

    /// A device status from its parts.
    public init(id: [UInt8], removedAfter: UInt64?, applied: UInt64, missing: UInt64) {
        self.id = id
        self.removedAfter = removedAfter
        self.applied = applied
        self.missing = missing
    }
}

/// The answer to ``Request/syncStatus(uid:)``.
public struct SyncStatus: Sendable, Hashable {
    /// This device's id.
    public var device: [UInt8]
    /// The device that is to approve this one, while a join waits for its approval.
    public var awaitingApprovalFrom: [UInt8]?
    /// The epoch new records are sealed under.
    public var epoch: UInt32
    /// This device's last sequence number.
    public var seq: UInt64
    /// Every device of the circle, removed ones included.
    public var devices: [SyncDeviceStatus]
    /// Pushed files waiting in arcad's queue (vault locked, or an earlier record missing).
    public var queued: UInt32
    /// Items with conflict siblings.
    public var conflicts: UInt32
    /// Refusals and flags, oldest first.
    public var reports: [String]
    /// What a detailed request adds (nil in a reply to an older client, or from an older arcad).
    public var detail: SyncStatusDetail?

    /// A status from its parts.
    public init(
        device: [UInt8], awaitingApprovalFrom: [UInt8]?, epoch: UInt32, seq: UInt64, devices: [SyncDeviceStatus],
        queued: UInt32, conflicts: UInt32, reports: [String], detail: SyncStatusDetail? = nil
    ) {
        self.device = device
        self.awaitingApprovalFrom = awaitingApprovalFrom
        self.epoch = epoch
        self.seq = seq
        self.devices = devices
        self.queued = queued
        self.conflicts = conflicts
        self.reports = reports
        self.detail = detail
    }
}

/// The part of ``SyncStatus`` a detailed request adds, after the fields older clients parse.
public struct SyncStatusDetail: Sendable, Hashable {
    /// Per device of ``SyncStatus/devices``, in the same order: the time its last head carries.
    public var devices: [SyncDeviceActivity]
    /// Files that waited for a circle update and expired (since this user's queue was created).
    public var expired: UInt32
    /// Files that wait for a circle update now (part of ``SyncStatus/queued``).
    public var waiting: UInt32

    /// A detail from its parts.
    public init(devices: [SyncDeviceActivity], expired: UInt32, waiting: UInt32) {
        self.devices = devices
        self.expired = expired
        self.waiting = waiting
    }
}

/// When a device of the circle was last heard of, and whether it is dormant.
public struct SyncDeviceActivity: Sendable, Hashable {
    /// The wall time (Unix milliseconds) its last head carries; 0 when none was seen (or an
    /// old-format head without one).
    public var headMillis: UInt64
    /// Whether the device is dormant: its last head is older than the sync horizon, so tombstone
    /// collection no longer waits for it (it resyncs from a snapshot when it comes back).
    public var dormant: Bool

    /// An activity from its parts.
    public init(headMillis: UInt64, dormant: Bool) {
        self.headMillis = headMillis
        self.dormant = dormant
    }
}

/// One version of a conflicted item (no secret: `arca resolve` names versions by hash).
public struct SyncVersion: Sendable, Hashable {
    /// The version's record hash (32 bytes).
    public var hash: [UInt8]
    /// Its author.
    public var author: [UInt8]
    /// Its hybrid logical clock, milliseconds part.
    public var clockMillis: UInt64
    /// Whether it is the version in the vault now.
    public var winner: Bool
    /// Whether it is a tombstone.
    public var deleted: Bool
    /// Its class and attributes (empty for a tombstone).
    public var attributes: AttributeMap

    /// A version from its parts.
    public init(
        hash: [UInt8], author: [UInt8], clockMillis: UInt64, winner: Bool, deleted: Bool, attributes: AttributeMap
    ) {
        self.hash = hash
        self.author = author
        self.clockMillis = clockMillis
        self.winner = winner
        self.deleted = deleted
        self.attributes = attributes
    }
}

/// An item with conflict siblings: its winner first, then the siblings.
public struct SyncConflict: Sendable, Hashable {
    /// The item's reference in the circle (16 bytes).
    public var item: [UInt8]
    /// The winner, then the siblings.
    public var versions: [SyncVersion]

    /// A conflict from its parts.
    public init(item: [UInt8], versions: [SyncVersion]) {
        self.item = item
        self.versions = versions
    }
}
