import ArcaProtocol
import Testing

/// Every class of malformed input maps to one exact `ProtocolError`.
@Suite("Malformed frames")
struct MalformedTests {
    typealias B = Bytes
    static let unlock = MessageKind.unlock.rawValue
    static let copyMatching = MessageKind.copyMatching.rawValue
    static let uid = B.be32(1000)

    /// A copy-matching body over the given attribute bytes (after the count).
    static func query(count: UInt32, attributes: [UInt8], tail: [UInt8] = [0, 1, 0, 0, 0]) -> [UInt8] {
        [1] + uid + [1] + B.be32(count) + attributes + tail
    }

    static func request(_ frame: [UInt8]) -> Result<Request, ProtocolError>? { decodeRequest(frame) }

    @Test("header: magic, version, kind, length")
    func header() throws {
        var frame = try Frame.encode(Request.lockAll, requestID: 1)
        frame[0] = 0x61
        #expect(Self.request(frame) == .failure(.badMagic))
        #expect(Frame.scan([0x41, 0x52, 0x43, 0x00]) == .invalid(.badMagic))
        #expect(Frame.scan([0x00]) == .invalid(.badMagic))
        #expect(Self.request(B.frame(kind: 8, body: [], version: 2)) == .failure(.unsupportedVersion(2)))
        #expect(Self.request(B.frame(kind: 8, body: [], version: 0)) == .failure(.unsupportedVersion(0)))
        #expect(Self.request(B.frame(kind: 0x0018, body: [])) == .failure(.unknownKind(0x0018)))
        #expect(Self.request(B.frame(kind: 0x0000, body: [])) == .failure(.unknownKind(0)))
        #expect(Self.request(B.frame(kind: 0x8009, body: [])) == .failure(.unknownKind(0x8009)))
        let limit = ProtocolLimits.maximumBodyLength
        let huge = Frame.magic + B.be16(1) + B.be16(8) + B.be32(1) + B.be32(UInt32(limit + 1))
        #expect(Frame.scan(huge) == .invalid(.frameTooLarge(length: limit + 1, limit: limit)))
        #expect(Self.request(huge) == .failure(.frameTooLarge(length: 2_097_137, limit: 2_097_136)))
        let maximal = Frame.magic + B.be16(1) + B.be16(8) + B.be32(1) + B.be32(UInt32(limit))
        #expect(Frame.scan(maximal) == .needMore(limit))
        let allOnes = Frame.magic + B.be16(1) + B.be16(8) + B.be32(1) + B.be32(.max)
        #expect(Self.request(allOnes) == .failure(.frameTooLarge(length: Int(UInt32.max), limit: limit)))
    }

    @Test("a kind of the other direction")
    func wrongDirection() throws {
        #expect(Self.request(try Frame.encode(Reply.ok, requestID: 1)) == .failure(.unexpectedKind(.ok)))
        #expect(decodeReply(try Frame.encode(Request.lockAll, requestID: 1)) == .failure(.unexpectedKind(.lockAll)))
    }

    @Test("a field running past the body: truncated")
    func truncated() throws {
        let body = Self.uid + B.field(Fixtures.key)
        for cut in 1...body.count {
            let frame = B.frame(kind: Self.unlock, body: Array(body.dropLast(cut)))
            #expect(Self.request(frame) == .failure(.truncated), "cut \(cut)")
        }
        // A list count larger than the bytes left is refused before allocating.
        let items = B.frame(kind: MessageKind.items.rawValue, body: B.be32(60_000) + [0, 0, 0, 0, 0, 0])
        #expect(decodeReply(items) == .failure(.truncated))
        // A header announcing more than arrived is not an error yet: the reader waits.
        let full = try Frame.encode(Request.unlock(uid: 1, key: Fixtures.key), requestID: 1)
        #expect(Frame.decode(Array(full.dropLast(5)), as: Request.self) == .needMore(5))
    }

    @Test("bytes after the last field: trailing bytes")
    func trailing() throws {
        #expect(
            Self.request(B.frame(kind: Self.unlock, body: Self.uid + B.field(Fixtures.key) + [0, 0, 0]))
                == .failure(.trailingBytes(count: 3)))
        #expect(
            Self.request(B.frame(kind: MessageKind.lockAll.rawValue, body: [0])) == .failure(.trailingBytes(count: 1)))
        #expect(
            decodeReply(B.frame(kind: MessageKind.ok.rawValue, body: [1, 2])) == .failure(.trailingBytes(count: 2)))
    }

    @Test("fields and lists over their limits")
    func overLong() {
        let token = B.frame(
            kind: MessageKind.closeSession.rawValue, body: Self.uid + B.be32(257) + [UInt8](repeating: 0, count: 257))
        #expect(Self.request(token) == .failure(.fieldTooLong(field: "token", length: 257, limit: 256)))
        // The limit is checked before the bytes are: a length of 4 GiB is "too long", not "truncated".
        let password = B.frame(kind: MessageKind.unlockWithPassword.rawValue, body: Self.uid + B.be32(.max))
        #expect(
            Self.request(password)
                == .failure(.fieldTooLong(field: "password", length: Int(UInt32.max), limit: 4096)))
        let secret = B.frame(
            kind: MessageKind.add.rawValue,
            body: [2, 1] + B.be32(0) + B.be32(UInt32(ProtocolLimits.maximumSecretLength + 1)))
        #expect(Self.request(secret) == .failure(.fieldTooLong(field: "secret", length: 1_048_577, limit: 1_048_576)))
        let service = Self.query(count: 1, attributes: B.be16(2) + [1] + B.be32(16_385))
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: service))
                == .failure(.fieldTooLong(field: "service", length: 16_385, limit: 16_384)))
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: Self.query(count: 23, attributes: [])))
                == .failure(.fieldTooLong(field: "attributes", length: 23, limit: 22)))
        let sessions = B.frame(kind: MessageKind.sessions.rawValue, body: B.be32(65_537))
        #expect(decodeReply(sessions) == .failure(.fieldTooLong(field: "sessions", length: 65_537, limit: 65_536)))
        let ref = Self.query(count: 0, attributes: [], tail: [1] + B.be32(65))
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: ref))
                == .failure(.fieldTooLong(field: "persistentRef", length: 65, limit: 64)))
    }

    @Test("fixed-size fields of another size")
    func wrongLength() {
        let short = B.frame(kind: Self.unlock, body: Self.uid + B.field([UInt8](repeating: 1, count: 31)))
        #expect(Self.request(short) == .failure(.wrongLength(field: "key", length: 31, expected: 32)))
        let long = B.frame(kind: Self.unlock, body: Self.uid + B.field([UInt8](repeating: 1, count: 33)))
        #expect(Self.request(long) == .failure(.wrongLength(field: "key", length: 33, expected: 32)))
        let change = B.frame(
            kind: MessageKind.changePassword.rawValue, body: Self.uid + B.field(Fixtures.key) + B.field([]))
        #expect(Self.request(change) == .failure(.wrongLength(field: "newKey", length: 0, expected: 32)))
        let kdf = B.be32(0) + B.be32(3) + B.be32(0) + B.be32(1 << 26) + B.field([UInt8](repeating: 0, count: 15))
        let enroll = B.frame(kind: MessageKind.enroll.rawValue, body: Self.uid + B.field(Fixtures.key) + kdf)
        #expect(Self.request(enroll) == .failure(.wrongLength(field: "salt", length: 15, expected: 16)))
    }

    @Test(
        "invalid UTF-8 where a string is expected",
        arguments: [
            [0xFF], [0xC0, 0x80], [0x80], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x61, 0xFE, 0x62],
        ] as [[UInt8]])
    func badUTF8(_ bad: [UInt8]) {
        let session = Self.uid + B.field([1]) + B.field(bad) + [0, 0, 0]
        #expect(
            Self.request(B.frame(kind: MessageKind.openSession.rawValue, body: session))
                == .failure(.invalidUTF8(field: "service")))
        let account = Self.query(count: 1, attributes: B.be16(3) + [1] + B.field(bad))
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: account)) == .failure(.invalidUTF8(field: "account")))
        let message = B.be32(UInt32(bitPattern: -50)) + B.field(bad)
        #expect(
            decodeReply(B.frame(kind: MessageKind.error.rawValue, body: message))
                == .failure(.invalidUTF8(field: "message")))
    }

    @Test("tags outside their sets")
    func unknownTags() {
        func query(_ attributes: [UInt8], count: UInt32 = 1, tail: [UInt8] = [0, 1, 0, 0, 0]) -> Result<
            Request, ProtocolError
        >? {
            Self.request(
                B.frame(kind: Self.copyMatching, body: Self.query(count: count, attributes: attributes, tail: tail)))
        }
        #expect(query(B.be16(23) + [1] + B.string("x")) == .failure(.unknownTag(field: "attribute tag", value: 23)))
        #expect(query(B.be16(0) + [1]) == .failure(.unknownTag(field: "attribute tag", value: 0)))
        #expect(query(B.be16(2) + [8]) == .failure(.unknownTag(field: "attribute type", value: 8)))
        #expect(query(B.be16(1) + [6, 3]) == .failure(.unknownTag(field: "item class", value: 3)))
        #expect(query(B.be16(22) + [7, 6]) == .failure(.unknownTag(field: "accessibility", value: 6)))
        #expect(query(B.be16(21) + [4, 2]) == .failure(.unknownTag(field: "synchronizable", value: 2)))
        #expect(query([], count: 0, tail: [2]) == .failure(.unknownTag(field: "persistentRef", value: 2)))
        #expect(query([], count: 0, tail: [0, 4]) == .failure(.unknownTag(field: "matchLimit", value: 4)))
        #expect(query([], count: 0, tail: [0, 1, 8]) == .failure(.unknownTag(field: "returnFlags", value: 8)))
        #expect(
            query([], count: 0, tail: [0, 1, 0, 2, 0]) == .failure(.unknownTag(field: "caseInsensitive", value: 2)))
        #expect(
            query([], count: 0, tail: [0, 1, 0, 0, 0xFF])
                == .failure(.unknownTag(field: "synchronizableAny", value: 255)))
        let vault = B.frame(kind: Self.copyMatching, body: [3])
        #expect(Self.request(vault) == .failure(.unknownTag(field: "vault", value: 3)))
        let itemClass = B.frame(kind: Self.copyMatching, body: [2, 0])
        #expect(Self.request(itemClass) == .failure(.unknownTag(field: "item class", value: 0)))
        let lock = B.frame(kind: MessageKind.lock.rawValue, body: Self.uid + [4])
        #expect(Self.request(lock) == .failure(.unknownTag(field: "lockClasses", value: 4)))
        let status = B.frame(kind: MessageKind.status.rawValue, body: [7])
        #expect(Self.request(status) == .failure(.unknownTag(field: "uid", value: 7)))
        let code = B.frame(kind: MessageKind.error.rawValue, body: B.be32(12345) + B.field([]))
        #expect(decodeReply(code) == .failure(.unknownTag(field: "status", value: 12345)))
    }

    @Test("duplicates, wrong types and values out of range")
    func semantic() {
        let twice = B.be16(2) + [1] + B.string("a") + B.be16(2) + [1] + B.string("b")
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: Self.query(count: 2, attributes: twice)))
                == .failure(.duplicateAttribute(.service)))
        let port = B.be16(16) + [1] + B.string("443")
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: Self.query(count: 1, attributes: port)))
                == .failure(.attributeTypeMismatch(.port, found: .string)))
        let zero = Self.query(count: 0, attributes: [], tail: [0, 3] + B.be32(0) + [0, 0, 0])
        #expect(
            Self.request(B.frame(kind: Self.copyMatching, body: zero)) == .failure(.invalidValue(field: "matchLimit")))
        let success = B.frame(kind: MessageKind.error.rawValue, body: B.be32(0) + B.field([]))
        #expect(decodeReply(success) == .failure(.invalidValue(field: "status")))
    }

    @Test("the encoder refuses what the decoder would")
    func encoderLimits() {
        func encode(_ request: Request) -> ProtocolError? {
            do { _ = try Frame.encode(request, requestID: 1) } catch { return error }
            return nil
        }
        #expect(encode(.unlock(uid: 1, key: [1, 2])) == .wrongLength(field: "key", length: 2, expected: 32))
        #expect(
            encode(.confirmCandidate(uid: 1, candidate: [1], session: []))
                == .wrongLength(field: "candidate", length: 1, expected: 32))
        #expect(
            encode(.confirmCandidate(uid: 1, candidate: Fixtures.key, session: [UInt8](repeating: 0, count: 257)))
                == .fieldTooLong(field: "session", length: 257, limit: 256))
        do {
            _ = try Frame.encode(Reply.candidate(token: [UInt8](repeating: 1, count: 33)), requestID: 1)
            Issue.record("a 33-byte candidate token encoded")
        } catch {
            #expect(error == .wrongLength(field: "candidate", length: 33, expected: 32))
        }
        let badSalt = KeyDerivationParameters(opsLimit: 1, memoryLimit: 1, salt: [])
        #expect(
            encode(.enroll(uid: 1, key: Fixtures.key, parameters: badSalt))
                == .wrongLength(field: "salt", length: 0, expected: 16))
        #expect(
            encode(.closeSession(uid: 1, token: [UInt8](repeating: 0, count: 257)))
                == .fieldTooLong(field: "token", length: 257, limit: 256))
        let mismatch = Query(itemClass: .genericPassword, attributes: [.service: .bool(true)])
        #expect(encode(.delete(vault: .system, query: mismatch)) == .attributeTypeMismatch(.service, found: .bool))
        #expect(
            encode(.delete(vault: .system, query: Query(itemClass: .genericPassword, matchLimit: .count(0))))
                == .invalidValue(field: "matchLimit"))
        #expect(
            encode(
                .delete(
                    vault: .system, query: Query(itemClass: .genericPassword, returnFlags: ReturnFlags(rawValue: 0x80)))
            )
                == .unknownTag(field: "returnFlags", value: 0x80))
        #expect(
            encode(.lock(uid: 1, classes: LockClasses(rawValue: 0xFF)))
                == .unknownTag(field: "lockClasses", value: 0xFF))
        let big = [UInt8](repeating: 0, count: ProtocolLimits.maximumSecretLength + 1)
        #expect(
            encode(.add(AddRequest(vault: .system, itemClass: .genericPassword, attributes: [:], secret: big)))
                == .fieldTooLong(field: "secret", length: 1_048_577, limit: 1_048_576))
        let long = Fixtures.string(ProtocolLimits.maximumNameLength + 1)
        #expect(
            encode(.openSession(SessionOpening(uid: 1, token: [], service: "login", tty: long)))
                == .fieldTooLong(field: "tty", length: 1025, limit: 1024))
        do {
            _ = try Frame.encode(Reply.error(status: .success, message: ""), requestID: 1)
            Issue.record("an error reply with status 0 encoded")
        } catch {
            #expect(error == .invalidValue(field: "status"))
        }
    }

    @Test("a reply too large for one frame is refused by the encoder")
    func frameTooLarge() {
        let item = ResultItem(data: [UInt8](repeating: 0, count: ProtocolLimits.maximumSecretLength))
        // Per item: attribute count 4, data marker 1 + length 4 + 1 MiB, ref marker 1.
        let body = 4 + 2 * (4 + 1 + 4 + ProtocolLimits.maximumSecretLength + 1)
        do {
            _ = try Frame.encode(Reply.items([item, item]), requestID: 1)
            Issue.record("a 2 MiB body encoded")
        } catch {
            #expect(error == .frameTooLarge(length: body, limit: ProtocolLimits.maximumBodyLength))
        }
    }
}
