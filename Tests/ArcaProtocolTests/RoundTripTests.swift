import ArcaProtocol
import Testing

@Suite("Round trip")
struct RoundTripTests {
    @Test("the fixtures cover every message kind")
    func fixturesCoverEveryKind() {
        let kinds = Set(Fixtures.requests.map(\.kind) + Fixtures.replies.map(\.kind))
        #expect(kinds == Set(MessageKind.allCases))
        #expect(MessageKind.allCases.filter(\.isRequest).count == 48)
        #expect(MessageKind.allCases.filter { !$0.isRequest }.count == 26)
    }

    @Test("every request decodes to an equal value", arguments: Fixtures.requests + Fixtures.largeRequests)
    func request(_ request: Request) throws {
        let frame = try Frame.encode(request, requestID: 0xDEAD_BEEF)
        #expect(frame.count <= ProtocolLimits.maximumFrameLength)
        #expect(frame.capacity - frame.count < 64, "the frame must be reserved at its final size")
        guard case .complete(let decoded) = Frame.decode(frame, as: Request.self) else {
            Issue.record("not decoded: \(Frame.decode(frame, as: Request.self))")
            return
        }
        #expect(decoded.message == request)
        #expect(decoded.requestID == 0xDEAD_BEEF)
        #expect(decoded.length == frame.count)
        #expect(Frame.scan(frame) == .complete(length: frame.count))
    }

    @Test("every reply decodes to an equal value", arguments: Fixtures.replies + Fixtures.largeReplies)
    func reply(_ reply: Reply) throws {
        let frame = try Frame.encode(reply, requestID: 0)
        guard case .complete(let decoded) = Frame.decode(frame, as: Reply.self) else {
            Issue.record("not decoded: \(Frame.decode(frame, as: Reply.self))")
            return
        }
        #expect(decoded.message == reply)
        #expect(decoded.requestID == 0)
        #expect(decoded.length == frame.count)
    }

    @Test("every attribute tag round-trips alone, with its own type")
    func everyAttribute() throws {
        for (tag, value) in Fixtures.maximalAttributes {
            let request = Request.copyMatching(
                vault: .user(uid: 1), query: Query(itemClass: .genericPassword, attributes: [tag: value]))
            #expect(decodeRequest(try Frame.encode(request, requestID: 1)) == .success(request))
        }
        #expect(AttributeTag.allCases.count == 22)
        #expect(AttributeTag.allCases.map(\.rawValue) == Array(1...22))
        #expect(Accessibility.allCases.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(Set(AttributeTag.allCases.map(\.fieldName)).count == 22)
        #expect(AttributeTag.description.fieldName == "description" && AttributeTag.protocol.fieldName == "protocol")
        #expect(AttributeTag.itemClass.fieldName == "class")
    }

    @Test("every status code survives an error reply")
    func everyStatus() throws {
        for status in ArcaStatus.allCases where status != .success {
            let reply = Reply.error(status: status, message: "m")
            #expect(decodeReply(try Frame.encode(reply, requestID: 1)) == .success(reply))
        }
    }

    @Test("a decoder reads attributes in any order; the encoder writes them sorted")
    func attributeOrder() throws {
        let body: [UInt8] =
            [1] + Bytes.be32(5) + [1] + Bytes.be32(2)
            + Bytes.be16(3) + [1] + Bytes.string("a")  // account first
            + Bytes.be16(2) + [1] + Bytes.string("s")  // then service
            + [0, 1, 0, 0, 0]
        let frame = Bytes.frame(kind: MessageKind.copyMatching.rawValue, body: body)
        let expected = Request.copyMatching(
            vault: .user(uid: 5),
            query: Query(itemClass: .genericPassword, attributes: [.service: .string("s"), .account: .string("a")]))
        #expect(decodeRequest(frame) == .success(expected))
        let reencoded = try Frame.encode(expected, requestID: 1)
        #expect(Array(reencoded[26..<34]) == Bytes.be16(2) + [1] + Bytes.string("s"))
    }

    @Test("two frames back to back decode one after the other")
    func backToBack() throws {
        let first = try Frame.encode(Request.lockAll, requestID: 1)
        let second = try Frame.encode(Request.unlock(uid: 7, key: Fixtures.key), requestID: 2)
        let buffer = first + second
        guard case .complete(let a) = Frame.decode(buffer, as: Request.self) else {
            Issue.record("first frame not decoded")
            return
        }
        #expect(a.message == .lockAll && a.length == first.count)
        guard case .complete(let b) = Frame.decode(buffer[a.length...], as: Request.self) else {
            Issue.record("second frame not decoded")
            return
        }
        #expect(b.message == .unlock(uid: 7, key: Fixtures.key) && b.requestID == 2 && b.length == second.count)
    }
}
