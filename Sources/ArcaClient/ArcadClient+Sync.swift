import ArcaProtocol

/// Why a sync call to arcad failed: no reply, or arcad's refusal with its status.
public enum SyncCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No reply (arcad not running, timed out, malformed reply…).
    case client(ClientError)
    /// arcad answered with an error: its status (`errSecInteractionNotAllowed` when locked,
    /// `errSecItemNotFound` when sync is not set up…) and its message.
    case refused(status: ArcaStatus, message: String)
    /// arcad answered with a reply of another kind.
    case unexpectedReply(MessageKind)

    /// The OSStatus this maps to.
    public var status: ArcaStatus {
        switch self {
        case .client(let e): e.status
        case .refused(let status, _): status
        case .unexpectedReply: .decode
        }
    }

    public var description: String {
        switch self {
        case .client(let e): e.description
        case .refused(_, let message): message
        case .unexpectedReply(let kind): "unexpected reply from arcad (kind \(kind.rawValue))"
        }
    }
}

/// Typed calls for the sync agent (`arca-sync`) and the CLI: one request each, the reply
/// unpacked. Everything that crosses here is ciphertext, ids or attributes.
extension ArcadClient {
    /// `arca sync join`: this machine's new device id, waiting for `approver`'s approval.
    public func syncJoin(uid: UInt32, approver: [UInt8]) throws(SyncCallError) -> [UInt8] {
        return try expect(.syncJoin(uid: uid, approver: approver)) {
            if case .syncDevice(let v) = $0 { v } else { nil }
        }
    }

    /// The short authentication string for approving `device` (nothing is approved).
    public func syncApprovalString(uid: UInt32, device: [UInt8]) throws(SyncCallError) -> String {
        try expect(.syncApprove(uid: uid, device: device, shortAuthenticationString: nil)) {
            if case .syncApproval(_, let sas) = $0 { sas } else { nil }
        }
    }

    /// `arca sync approve`: approves `device` after the person checked `shortAuthenticationString`;
    /// returns the signed approval (also in the outbox).
    public func syncApprove(uid: UInt32, device: [UInt8], shortAuthenticationString: String) throws(SyncCallError)
        -> [UInt8]
    {
        try expect(.syncApprove(uid: uid, device: device, shortAuthenticationString: shortAuthenticationString)) {
            if case .syncApproval(let approval, _) = $0 { approval } else { nil }
        }
    }

    /// This device's records after `after`, its head and approvals.
    public func syncPull(uid: UInt32, after: UInt64) throws(SyncCallError) -> SyncOutbox {
        return try expect(.syncPull(uid: uid, after: after)) { if case .syncOutbox(let v) = $0 { v } else { nil } }
    }

    /// Hands other devices' files to arcad; one outcome per file.
    public func syncPush(uid: UInt32, files: [SyncFile]) throws(SyncCallError) -> [SyncFileOutcome] {
        return try expect(.syncPush(uid: uid, files: files)) { if case .syncPushResult(let v) = $0 { v } else { nil } }
    }

    /// `arca sync remove`: the new epoch and the items the removed device may have read.
    public func syncRemove(uid: UInt32, device: [UInt8]) throws(SyncCallError) -> SyncRemoval {
        return try expect(.syncRemove(uid: uid, device: device)) { if case .syncRemoval(let v) = $0 { v } else { nil } }
    }

    /// `arca sync status`; `detailed`: with its ``SyncStatus/detail`` (an arcad from before it
    /// closes the connection on the request's flag byte: ask again without it).
    public func syncStatus(uid: UInt32, detailed: Bool = false) throws(SyncCallError) -> SyncStatus {
        return try expect(.syncStatus(uid: uid, detailed: detailed)) {
            if case .syncStatus(let v) = $0 { v } else { nil }
        }
    }

    /// `arca find --conflicts`.
    public func syncConflicts(uid: UInt32) throws(SyncCallError) -> [SyncConflict] {
        return try expect(.syncConflicts(uid: uid)) { if case .syncConflicts(let v) = $0 { v } else { nil } }
    }

    /// `arca resolve`: keeps version `keep` of `item`.
    public func syncResolve(uid: UInt32, item: [UInt8], keep: [UInt8]) throws(SyncCallError) {
        try expect(.syncResolve(uid: uid, item: item, keep: keep)) { if case .ok = $0 { () } else { nil } }
    }

    /// Sends `request`; an error reply throws `refused`, a reply `extract` does not recognise
    /// throws `unexpectedReply`.
    /// `arca sync recover`: the recovery key whose text is `secret` opens a recovery seal among
    /// `files` (the synced folder's approvals and heads); this machine's new device id. The
    /// request's copy of `secret` is wiped here; the caller wipes its own.
    public func syncRecover(uid: UInt32, files: [SyncFile], secret: [UInt8]) throws(SyncCallError) -> [UInt8] {
        var request = Request.syncRecover(uid: uid, files: files, secret: secret)
        defer { request.wipeSecrets() }
        return try expect(request) { if case .syncDevice(let v) = $0 { v } else { nil } }
    }

    private func expect<T>(_ request: Request, _ extract: (Reply) -> T?) throws(SyncCallError) -> T {
        let reply: Reply
        do { reply = try send(request) } catch { throw .client(error) }
        if case .error(let status, let message) = reply { throw .refused(status: status, message: message) }
        guard let value = extract(reply) else { throw .unexpectedReply(reply.kind) }
        return value
    }
}
