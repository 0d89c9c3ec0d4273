import ArcaProtocol
import Testing

/// The login's auth without a connection (pam_arca derives with the published KDF
/// parameters): request 0x0042 `loginUnlockDerived` and reply 0x802C `staleParameters`,
/// pinned byte by byte as Frame.swift specifies them, and every way to send them broken.
@Suite("Golden bytes: derived login")
struct DerivedLoginFrameTests {
    typealias B = Bytes

    /// uid 1000, key 00…1f, kdf: ops 3, memory 64 MiB, salt 64…73 (100…115).
    static let loginUnlockDerivedHex = """
        41524341 0001 0042 00000007 0000004c
        000003e8
        00000020 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
        0000000000000003 0000000004000000
        00000010 6465666768696a6b6c6d6e6f70717273
        """

    /// The vault's kdf, bare: no presence byte (unlike kdfParameters' opt<kdf>).
    static let staleParametersHex = """
        41524341 0001 802c 00000007 00000024
        0000000000000003 0000000004000000
        00000010 6465666768696a6b6c6d6e6f70717273
        """

    static let request = Request.loginUnlockDerived(uid: 1000, key: Fixtures.key, parameters: Fixtures.kdf)
    static let reply = Reply.staleParameters(Fixtures.kdf)

    @Test("loginUnlockDerived: uid, key, kdf")
    func loginUnlockDerived() throws {
        #expect(MessageKind.loginUnlockDerived.rawValue == 0x0042)
        let frame = try Frame.encode(Self.request, requestID: 7)
        #expect(B.hex(frame) == B.hex(B.fromHex(Self.loginUnlockDerivedHex)))
        #expect(decodeRequest(B.fromHex(Self.loginUnlockDerivedHex)) == .success(Self.request))
    }

    @Test("staleParameters: the vault's kdf")
    func staleParameters() throws {
        #expect(MessageKind.staleParameters.rawValue == 0x802C)
        let frame = try Frame.encode(Self.reply, requestID: 7)
        #expect(B.hex(frame) == B.hex(B.fromHex(Self.staleParametersHex)))
        #expect(decodeReply(B.fromHex(Self.staleParametersHex)) == .success(Self.reply))
    }

    @Test("a body cut anywhere is truncated")
    func truncated() {
        let request = Array(B.fromHex(Self.loginUnlockDerivedHex).dropFirst(16))
        for cut in 1...request.count {
            let frame = B.frame(kind: 0x0042, body: Array(request.dropLast(cut)), requestID: 7)
            #expect(decodeRequest(frame) == .failure(.truncated), "request cut \(cut)")
        }
        let reply = Array(B.fromHex(Self.staleParametersHex).dropFirst(16))
        for cut in 1...reply.count {
            let frame = B.frame(kind: 0x802C, body: Array(reply.dropLast(cut)), requestID: 7)
            #expect(decodeReply(frame) == .failure(.truncated), "reply cut \(cut)")
        }
    }

    @Test("bytes after the salt are trailing bytes")
    func trailing() {
        let request = Array(B.fromHex(Self.loginUnlockDerivedHex).dropFirst(16)) + [0xAA]
        #expect(decodeRequest(B.frame(kind: 0x0042, body: request)) == .failure(.trailingBytes(count: 1)))
        let reply = Array(B.fromHex(Self.staleParametersHex).dropFirst(16)) + [0, 0, 0]
        #expect(decodeReply(B.frame(kind: 0x802C, body: reply)) == .failure(.trailingBytes(count: 3)))
    }

    @Test("a key or salt of another size")
    func wrongLength() throws {
        let kdf = B.be32(0) + B.be32(3) + B.be32(0) + B.be32(1 << 26)
        let shortKey = B.be32(1000) + B.field([UInt8](repeating: 1, count: 31)) + kdf + B.field(Fixtures.salt)
        #expect(
            decodeRequest(B.frame(kind: 0x0042, body: shortKey))
                == .failure(.wrongLength(field: "key", length: 31, expected: 32)))
        let longSalt = B.be32(1000) + B.field(Fixtures.key) + kdf + B.field(Fixtures.salt + [0])
        #expect(
            decodeRequest(B.frame(kind: 0x0042, body: longSalt))
                == .failure(.wrongLength(field: "salt", length: 17, expected: 16)))
        let shortSalt = kdf + B.field(Array(Fixtures.salt.dropLast()))
        #expect(
            decodeReply(B.frame(kind: 0x802C, body: shortSalt))
                == .failure(.wrongLength(field: "salt", length: 15, expected: 16)))
        // The encoder refuses what the decoder would: a 15-byte salt never leaves.
        let bad = KeyDerivationParameters(opsLimit: 3, memoryLimit: 1 << 26, salt: Array(Fixtures.salt.dropLast()))
        #expect(throws: ProtocolError.wrongLength(field: "salt", length: 15, expected: 16)) {
            _ = try Frame.encode(Reply.staleParameters(bad), requestID: 7)
        }
        #expect(throws: ProtocolError.wrongLength(field: "key", length: 0, expected: 32)) {
            _ = try Frame.encode(Request.loginUnlockDerived(uid: 1, key: [], parameters: Fixtures.kdf), requestID: 7)
        }
    }

    /// A kdfParameters reply's body (with its presence byte) under 0x802C: the byte shifts
    /// every field, and the salt's length reads as 0.
    @Test("a kdfParameters body is not a staleParameters body")
    func presenceByte() throws {
        let kdfParameters = try Frame.encode(Reply.kdfParameters(Fixtures.kdf), requestID: 7)
        let body = Array(kdfParameters.dropFirst(16))
        #expect(body.count == 37)
        #expect(
            decodeReply(B.frame(kind: 0x802C, body: body))
                == .failure(.wrongLength(field: "salt", length: 0, expected: 16)))
    }

    @Test("each travels one way only")
    func wrongDirection() {
        #expect(
            decodeRequest(B.fromHex(Self.staleParametersHex)) == .failure(.unexpectedKind(.staleParameters)))
        #expect(
            decodeReply(B.fromHex(Self.loginUnlockDerivedHex)) == .failure(.unexpectedKind(.loginUnlockDerived)))
    }
}
