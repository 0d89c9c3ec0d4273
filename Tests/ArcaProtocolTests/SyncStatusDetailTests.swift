import ArcaProtocol
import Testing

/// `arca sync status` learned which devices are dormant and how many waiting files expired
/// (issue 17): asked for with a trailing flags byte, sent after every field an older client
/// parses, so a client that does not ask gets byte for byte the reply it always got.
@Suite("Sync status detail")
struct SyncStatusDetailTests {
    static let key = [UInt8](repeating: 0xA5, count: 32)
    static let base = SyncStatus(
        device: key, awaitingApprovalFrom: nil, epoch: 1, seq: 2,
        devices: [SyncDeviceStatus(id: key, removedAfter: nil, applied: 2, missing: 0)], queued: 3, conflicts: 0,
        reports: ["r"])

    func decodeRequest(_ frame: [UInt8]) -> Request? {
        guard case .complete(let decoded) = Frame.decode(frame, as: Request.self) else { return nil }
        return decoded.message
    }

    func decodeReply(_ frame: [UInt8]) -> DecodedFrame<Reply>? {
        guard case .complete(let decoded) = Frame.decode(frame, as: Reply.self) else { return nil }
        return decoded
    }

    @Test func theRequestCarriesTheFlagOnlyWhenAsked() throws {
        let plain = try Frame.encode(Request.syncStatus(uid: 7), requestID: 1)
        let detailed = try Frame.encode(Request.syncStatus(uid: 7, detailed: true), requestID: 1)
        #expect(detailed.count == plain.count + 1)
        #expect(decodeRequest(plain) == .syncStatus(uid: 7, detailed: false))
        #expect(decodeRequest(detailed) == .syncStatus(uid: 7, detailed: true))
        var unknown = detailed
        unknown[unknown.count - 1] = 2
        guard case .invalid = Frame.decode(unknown, as: Request.self) else {
            Issue.record("an unknown flag must be refused")
            return
        }
    }

    @Test func aReplyWithoutDetailIsTheOldFormAndOneWithItRoundTrips() throws {
        var detailed = Self.base
        detailed.detail = SyncStatusDetail(
            devices: [SyncDeviceActivity(headMillis: 1_796_171_465_000, dormant: true)], expired: 9, waiting: 4)
        let old = try Frame.encode(Reply.syncStatus(Self.base), requestID: 3)
        let new = try Frame.encode(Reply.syncStatus(detailed), requestID: 3)
        // The old form is a prefix of the new one (apart from the frame's length): an older
        // client is never sent the extension, and a new one reads an older arcad's reply.
        #expect(new.count == old.count + 4 + (8 + 1) + 4 + 4)
        #expect(decodeReply(old)?.message == .syncStatus(Self.base))
        #expect(decodeReply(new)?.message == .syncStatus(detailed))
    }
}
