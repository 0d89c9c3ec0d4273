import ArcaProtocol
import Testing

/// The exact bytes of a few messages, pinned: a change here is a protocol
/// change and needs a new version number.
@Suite("Golden bytes")
struct GoldenTests {
    static let unlockHex = """
        41524341 0001 0003 00000007 00000028
        000003e8 00000020
        000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
        """

    static let copyMatchingHex = """
        41524341 0001 000b 01020304 00000022
        01 000003e8
        01
        00000002
        0002 01 00000003 776562
        0003 01 00000002 c3a9
        00
        02
        03
        00
        00
        """

    static let errorHex = """
        41524341 0001 8001 00000007 00000011
        ffff9d2c 00000009 6e6f7420666f756e64
        """

    static let syncPushHex = """
        41524341 0001 0036 00000009 00000033
        000003e8
        00000001
        02 00000020 1111111111111111111111111111111111111111111111111111111111111111 00000002 abcd
        """

    static let syncPushResultHex = """
        41524341 0001 8025 00000009 00000014
        00000002
        01 00000000
        04 00000006 666f72676564
        """

    static let copyMatching = Request.copyMatching(
        vault: .user(uid: 1000),
        query: Query(
            itemClass: .genericPassword, attributes: [.account: .string("é"), .service: .string("web")],
            matchLimit: .all, returnFlags: [.data, .attributes]))

    @Test("unlock")
    func unlock() throws {
        let request = Request.unlock(uid: 1000, key: Fixtures.key)
        let frame = try Frame.encode(request, requestID: 7)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.unlockHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.unlockHex)) == .success(request))
    }

    @Test("copyMatching with two attributes")
    func copyMatchingQuery() throws {
        let frame = try Frame.encode(Self.copyMatching, requestID: 0x0102_0304)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.copyMatchingHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.copyMatchingHex)) == .success(Self.copyMatching))
    }

    @Test("sync push of one head, and its outcomes")
    func syncPush() throws {
        let request = Request.syncPush(
            uid: 1000, files: [SyncFile(kind: .head, author: [UInt8](repeating: 0x11, count: 32), bytes: [0xAB, 0xCD])])
        #expect(Bytes.hex(try Frame.encode(request, requestID: 9)) == Bytes.hex(Bytes.fromHex(Self.syncPushHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.syncPushHex)) == .success(request))
        let reply = Reply.syncPushResult([
            SyncFileOutcome(code: .applied), SyncFileOutcome(code: .refused, message: "forged"),
        ])
        #expect(Bytes.hex(try Frame.encode(reply, requestID: 9)) == Bytes.hex(Bytes.fromHex(Self.syncPushResultHex)))
        #expect(decodeReply(Bytes.fromHex(Self.syncPushResultHex)) == .success(reply))
    }

    @Test("error reply: errSecItemNotFound")
    func errorReply() throws {
        let reply = Reply.error(status: .itemNotFound, message: "not found")
        let frame = try Frame.encode(reply, requestID: 7)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.errorHex)))
        #expect(decodeReply(Bytes.fromHex(Self.errorHex)) == .success(reply))
    }

    /// arcad's answer to a request whose reply would pass a frame: its own status
    /// (errSecBufferTooSmall, -25301 = 0xffff9d2b), so a client splits on the code, not the text.
    static let replyTooLargeHex = """
        41524341 0001 8001 00000007 00000017
        ffff9d2b 0000000f 7265706c7920746f6f206c61726765
        """

    @Test("error reply: reply too large, errSecBufferTooSmall")
    func replyTooLarge() throws {
        let reply = Reply.error(status: .bufferTooSmall, message: ProtocolLimits.replyTooLargeMessage)
        #expect(ArcaStatus.bufferTooSmall.rawValue == -25301)
        #expect(ProtocolLimits.replyTooLargeMessage == "reply too large")
        let frame = try Frame.encode(reply, requestID: 7)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.replyTooLargeHex)))
        #expect(decodeReply(Bytes.fromHex(Self.replyTooLargeHex)) == .success(reply))
    }

    static let grantHex = """
        41524341 0001 0013 00000009 00000025
        01 00000000 00 02 00 00 00
        00000003
        01 000003e7
        02 00000065
        03 00000002 7067 00000002 6964
        """

    static let grantsHex = """
        41524341 0001 8007 00000009 00000016
        00000001
        01 00000002 7067
        00
        00
        00000001
        01 000003e7
        """

    @Test("grant to a user, a group and a unit")
    func grant() throws {
        let request = Request.grant(
            query: Query(itemClass: .genericPassword, matchLimit: .all),
            principals: [.user(999), .group(101), .unit(name: "pg", credential: "id")])
        let frame = try Frame.encode(request, requestID: 9)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.grantHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.grantHex)) == .success(request))
    }

    @Test("grants reply")
    func grantsReply() throws {
        let reply = Reply.grants([GrantEntry(service: "pg", account: nil, label: nil, principals: [.user(999)])])
        let frame = try Frame.encode(reply, requestID: 9)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.grantsHex)))
        #expect(decodeReply(Bytes.fromHex(Self.grantsHex)) == .success(reply))
    }

    static let confirmCandidateHex = """
        41524341 0001 0017 00000007 0000002e
        000003e8
        00000020 a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5
        00000002 0909
        """

    static let candidateHex = """
        41524341 0001 8008 00000007 00000024
        00000020 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
        """

    @Test("loginUnlock is unlock's body under its own kind")
    func loginUnlock() throws {
        var bytes = Bytes.fromHex(Self.unlockHex)
        bytes[7] = 0x16
        #expect(
            Bytes.hex(try Frame.encode(Request.loginUnlock(uid: 1000, key: Fixtures.key), requestID: 7))
                == Bytes.hex(bytes))
    }

    @Test("confirmCandidate and the candidate reply")
    func candidate() throws {
        let request = Request.confirmCandidate(uid: 1000, candidate: Fixtures.otherKey, session: [9, 9])
        #expect(
            Bytes.hex(try Frame.encode(request, requestID: 7)) == Bytes.hex(Bytes.fromHex(Self.confirmCandidateHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.confirmCandidateHex)) == .success(request))
        let reply = Reply.candidate(token: Fixtures.key)
        #expect(Bytes.hex(try Frame.encode(reply, requestID: 7)) == Bytes.hex(Bytes.fromHex(Self.candidateHex)))
        #expect(decodeReply(Bytes.fromHex(Self.candidateHex)) == .success(reply))
    }

    @Test("a principal of an unknown kind is rejected")
    func unknownPrincipal() {
        var bytes = Bytes.fromHex(Self.grantHex)
        // The first principal's kind byte: header 16 + query 10 + count 4.
        bytes[16 + 10 + 4] = 4
        #expect(decodeRequest(bytes) == .failure(.unknownTag(field: "principal", value: 4)))
    }

    static let addAttributeItemHex = """
        41524341 0001 0020 0000000b 00000037
        000003e8
        00000001 4c
        00000002
        00000001 6b 00000002 c3a9
        0000000a 78646723736368656d61 00000001 78
        00000000
        00000002 7077
        00
        01
        """

    static let eventsHex = """
        41524341 0001 8011 0000000c 00000017
        0000000000000007
        00
        00000003
        01 02
        02 00000002 abcd
        05
        """

    @Test("addAttributeItem: attributes sorted by name, replace")
    func addAttributeItem() throws {
        let request = Request.addAttributeItem(
            AttributeItemAdd(
                uid: 1000, label: "L", attributes: ["xdg#schema": "x", "k": "é"], contentType: "",
                secret: Array("pw".utf8), replace: true))
        let frame = try Frame.encode(request, requestID: 11)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.addAttributeItemHex)))
        #expect(decodeRequest(Bytes.fromHex(Self.addAttributeItemHex)) == .success(request))
    }

    @Test("events reply")
    func eventsReply() throws {
        let reply = Reply.events(
            EventBatch(
                next: 7, missed: false,
                events: [
                    .lockChanged(unlocked: .afterFirstUnlock), .itemAdded(reference: [0xAB, 0xCD]), .itemsChanged,
                ]))
        let frame = try Frame.encode(reply, requestID: 12)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.eventsHex)))
        #expect(decodeReply(Bytes.fromHex(Self.eventsHex)) == .success(reply))
    }

    @Test("an attribute name sent twice is rejected")
    func duplicateAttributeName() {
        var bytes = Bytes.fromHex(Self.addAttributeItemHex)
        // Rename the second pair "xdg#schema" to "k": the same name twice.
        let body = Array(bytes[16...])
        let second = Bytes.string("xdg#schema") + Bytes.string("x")
        guard
            let at = (0...(body.count - second.count)).first(where: { Array(body[$0..<($0 + second.count)]) == second })
        else {
            Issue.record("pair not found")
            return
        }
        let newBody = Array(body[..<at]) + Bytes.string("k") + Bytes.string("x") + Array(body[(at + second.count)...])
        bytes = Bytes.frame(kind: 0x0020, body: newBody, requestID: 11)
        #expect(decodeRequest(bytes) == .failure(.invalidValue(field: "attributes")))
    }

    @Test("a wait longer than the limit is rejected")
    func waitTooLong() {
        let body = Bytes.be32(1000) + [0, 0, 0, 0, 0, 0, 0, 1] + Bytes.be32(25_001)
        #expect(
            decodeRequest(Bytes.frame(kind: 0x0025, body: body))
                == .failure(.invalidValue(field: "timeoutMilliseconds")))
        #expect(throws: ProtocolError.invalidValue(field: "timeoutMilliseconds")) {
            _ = try Frame.encode(Request.waitEvents(uid: 1, after: 1, timeoutMilliseconds: 25_001), requestID: 1)
        }
    }

    @Test("the empty messages are a bare header")
    func emptyBodies() throws {
        #expect(Bytes.hex(try Frame.encode(Request.lockAll, requestID: 1)) == "41524341000100080000000100000000")
        #expect(Bytes.hex(try Frame.encode(Reply.ok, requestID: 1)) == "41524341000180000000000100000000")
        #expect(Bytes.hex(try Frame.encode(Request.listGrants, requestID: 1)) == "41524341000100150000000100000000")
    }
}
