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

    @Test("error reply: errSecItemNotFound")
    func errorReply() throws {
        let reply = Reply.error(status: .itemNotFound, message: "not found")
        let frame = try Frame.encode(reply, requestID: 7)
        #expect(Bytes.hex(frame) == Bytes.hex(Bytes.fromHex(Self.errorHex)))
        #expect(decodeReply(Bytes.fromHex(Self.errorHex)) == .success(reply))
    }

    @Test("the empty messages are a bare header")
    func emptyBodies() throws {
        #expect(Bytes.hex(try Frame.encode(Request.lockAll, requestID: 1)) == "41524341000100080000000100000000")
        #expect(Bytes.hex(try Frame.encode(Reply.ok, requestID: 1)) == "41524341000180000000000100000000")
    }
}
