import ArcaClient
import ArcaProtocol
import ArcaSync

/// The agent's link to arcad: the sync requests, as the user (arcad decides from the socket's
/// peer credentials). A connection per request: arcad ends a connection that stays idle past
/// its client timeout, and the agent idles for minutes between events.
public final class ArcadSyncLink: AgentArcad {
    let socket: String
    let timeoutMilliseconds: Int
    let uid: UInt32
    /// See ``takeStatus()``.
    var lastStatus: SyncStatus?

    /// A link to the arcad at `socket`; fails now if nothing answers there.
    init(socket: String, uid: UInt32, timeoutMilliseconds: Int) throws(SyncAgentError) {
        self.socket = socket
        self.timeoutMilliseconds = timeoutMilliseconds
        self.uid = uid
        _ = try connect()
    }

    func connect() throws(SyncAgentError) -> ArcadClient {
        do { return try ArcadClient(path: socket, timeoutMilliseconds: timeoutMilliseconds) } catch {
            throw .arcad(error.description)
        }
    }

    /// One typed call on a fresh connection; every failure becomes this layer's `.arcad` (the one mapping).
    func call<T>(_ what: String, _ body: (ArcadClient) throws(SyncCallError) -> T) throws(SyncAgentError) -> T {
        let client = try connect()
        do { return try body(client) } catch { throw .arcad("\(what): \(error.description)") }
    }

    public func wait(after: UInt64, timeoutMilliseconds: UInt32) throws(SyncAgentError) -> (
        next: UInt64, changed: Bool
    ) {
        let client = try connect()
        let reply: Reply
        do {
            reply = try client.send(.waitEvents(uid: uid, after: after, timeoutMilliseconds: timeoutMilliseconds))
        } catch { throw .arcad("wait: \(error.description)") }
        switch reply {
        case .events(let batch): return (batch.next, batch.missed || !batch.events.isEmpty)
        case .error(_, let message): throw .arcad("wait: \(message)")
        default: throw .arcad("wait: unexpected reply from arcad")
        }
    }

    public func deviceID() throws(SyncAgentError) -> [UInt8]? {
        let client = try connect()
        do { return try client.syncStatus(uid: uid, detailed: false).device } catch {
            // Not set up for this user here: no identity yet.
            if case .refused(.itemNotFound, _) = error { return nil }
            throw .arcad("status: \(error.description)")
        }
    }

    public func pull(after: UInt64) throws(SyncAgentError) -> AgentOutbox {
        let outbox = try call("pull") { client throws(SyncCallError) in try client.syncPull(uid: uid, after: after) }
        return AgentOutbox(
            records: outbox.records.map { ($0.seq, $0.bytes) }, head: outbox.head.isEmpty ? nil : outbox.head,
            approvals: outbox.approvals.map { (Hex.encode($0.device), $0.bytes) }, more: outbox.more,
            snapshot: outbox.snapshot.isEmpty ? nil : outbox.snapshot)
    }

    public func push(_ files: [AgentFile]) throws(SyncAgentError) -> [AgentOutcome] {
        var wire: [SyncFile] = []
        for file in files {
            guard let author = Hex.decode(file.author) else { throw .folder("bad device directory \(file.author)") }
            let kind: SyncFileKind =
                switch file.kind {
                case .record: .record
                case .head: .head
                case .approval: .approval
                case .snapshot: .snapshot
                }
            wire.append(SyncFile(kind: kind, author: author, bytes: file.bytes))
        }
        lastStatus = nil  // the push may change the circle
        let outcomes = try call("push") { client throws(SyncCallError) in try client.syncPush(uid: uid, files: wire) }
        return outcomes.map { outcome in
            switch outcome.code {
            case .applied, .duplicate: .applied
            case .queued: .queued
            case .refused: .refused(outcome.message)
            case .deferred: .notYet(outcome.message)  // a full queue: offered again at a later pass
            }
        }
    }

    public func appliedSeqs() throws(SyncAgentError) -> [String: UInt64] {
        let status = try status()
        return Dictionary(status.devices.map { (Hex.encode($0.id), $0.applied) }, uniquingKeysWith: max)
    }

    public func waitingFiles() throws(SyncAgentError) -> (waiting: UInt32, expired: UInt32)? {
        let status = try status(detailed: true)
        lastStatus = status
        return status.detail.map { ($0.waiting, $0.expired) }
    }

    /// The status `waitingFiles` fetched, unless a push came after it: the run loop's mesh
    /// reuses it instead of asking arcad a second time in one pass. Taking it clears it.
    public func takeStatus() -> SyncStatus? {
        defer { lastStatus = nil }
        return lastStatus
    }

    func join(approver: [UInt8]) throws(SyncAgentError) -> [UInt8] {
        try call("join") { client throws(SyncCallError) in try client.syncJoin(uid: uid, approver: approver) }
    }

    /// The code arcad computes for approving `device` (nothing approved).
    func approvalCode(_ device: [UInt8]) throws(SyncAgentError) -> String {
        try call("approve") { client throws(SyncCallError) in try client.syncApprovalString(uid: uid, device: device) }
    }

    /// The signed approval of `device`, after the person checked `code`.
    func approve(_ device: [UInt8], code: String) throws(SyncAgentError) -> [UInt8] {
        try call("approve") { client throws(SyncCallError) in
            try client.syncApprove(uid: uid, device: device, shortAuthenticationString: code)
        }
    }

    func remove(_ device: [UInt8]) throws(SyncAgentError) -> SyncRemoval {
        try call("remove") { client throws(SyncCallError) in try client.syncRemove(uid: uid, device: device) }
    }

    /// arcad's sync status; `detailed` (`arca sync status` only): with its detail, or without
    /// it from an arcad too old to know it (it closes the connection on the flag byte).
    func status(detailed: Bool = false) throws(SyncAgentError) -> SyncStatus {
        if detailed {
            let client = try connect()
            do { return try client.syncStatus(uid: uid, detailed: true) } catch {
                guard case .client = error else { throw .arcad("status: \(error.description)") }
            }
        }
        return try call("status") { client throws(SyncCallError) in try client.syncStatus(uid: uid, detailed: false) }
    }
}
