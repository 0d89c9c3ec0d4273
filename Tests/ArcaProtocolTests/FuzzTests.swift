import ArcaProtocol
import Testing

/// Seeded random and mutated frames through the decoder: it never crashes,
/// always answers, and whatever it accepts re-encodes to an equal message.
@Suite("Fuzz")
struct FuzzTests {
    /// Outcome counts of one run.
    struct Tally {
        var complete = 0
        var repliesComplete = 0
        var needMore = 0
        var invalid: [String: Int] = [:]
        var total: Int { complete + needMore + invalid.values.reduce(0, +) }
    }

    /// Decodes `bytes` as a request and as a reply and checks each outcome.
    static func check(_ bytes: [UInt8], into tally: inout Tally) {
        let scan = Frame.scan(bytes)
        switch Frame.decode(bytes, as: Request.self) {
        case .complete(let frame):
            tally.complete += 1
            #expect(scan == .complete(length: frame.length) && frame.length <= bytes.count)
            #expect(decodeRequest(reencode(frame.message, frame.requestID)) == .success(frame.message))
        case .needMore(let n):
            tally.needMore += 1
            #expect(scan == .needMore(n) && n > 0)
        case .invalid(let error):
            tally.invalid[caseName(error), default: 0] += 1
        }
        switch Frame.decode(bytes, as: Reply.self) {
        case .complete(let frame):
            tally.repliesComplete += 1
            #expect(decodeReply(reencode(frame.message, frame.requestID)) == .success(frame.message))
        case .needMore(let n): #expect(scan == .needMore(n))
        case .invalid: break
        }
    }

    static func reencode(_ request: Request, _ id: UInt32) -> [UInt8] {
        do { return try Frame.encode(request, requestID: id) } catch {
            Issue.record("a decoded request does not encode: \(error)")
            return []
        }
    }

    static func reencode(_ reply: Reply, _ id: UInt32) -> [UInt8] {
        do { return try Frame.encode(reply, requestID: id) } catch {
            Issue.record("a decoded reply does not encode: \(error)")
            return []
        }
    }

    static func caseName(_ error: ProtocolError) -> String {
        switch error {
        case .badMagic: return "badMagic"
        case .unsupportedVersion: return "unsupportedVersion"
        case .unknownKind: return "unknownKind"
        case .unexpectedKind: return "unexpectedKind"
        case .frameTooLarge: return "frameTooLarge"
        case .truncated: return "truncated"
        case .trailingBytes: return "trailingBytes"
        case .fieldTooLong: return "fieldTooLong"
        case .wrongLength: return "wrongLength"
        case .invalidUTF8: return "invalidUTF8"
        case .unknownTag: return "unknownTag"
        case .duplicateAttribute: return "duplicateAttribute"
        case .attributeTypeMismatch: return "attributeTypeMismatch"
        case .invalidValue: return "invalidValue"
        }
    }

    @Test("10,000 random frames")
    func random() {
        var rng = XorShift(seed: 0x5EED_0001)
        var tally = Tally()
        let kinds = MessageKind.allCases.map(\.rawValue)
        for round in 0..<10_000 {
            var bytes = (0..<rng.below(300)).map { _ in rng.byte() }
            // Three in four get a valid header start, so bodies are reached.
            if round % 4 != 0 {
                let body = rng.below(4) == 0 ? rng.below(1 << 24) : bytes.count
                let header =
                    Frame.magic + [0, 1] + Bytes.be16(kinds[rng.below(kinds.count)])
                    + Bytes.be32(UInt32(truncatingIfNeeded: rng.next())) + Bytes.be32(UInt32(body))
                bytes = header + bytes
            }
            Self.check(bytes, into: &tally)
        }
        #expect(tally.total == 10_000)
        #expect(tally.invalid["badMagic", default: 0] > 2000)
        #expect(tally.invalid.count >= 5, "\(tally.invalid)")
        #expect(tally.complete > 0 && tally.needMore > 0)
        print("fuzz random: \(tally)")
    }

    @Test("10,000 mutated valid frames")
    func mutated() throws {
        let seeds =
            try Fixtures.requests.enumerated().map { try Frame.encode($1, requestID: UInt32($0)) }
            + Fixtures.replies.enumerated().map { try Frame.encode($1, requestID: UInt32($0)) }
        let small = seeds.filter { $0.count <= 8192 }
        var rng = XorShift(seed: 0x5EED_0002)
        var tally = Tally()
        for _ in 0..<10_000 {
            var bytes = small[rng.below(small.count)]
            for _ in 0..<(1 + rng.below(4)) { Self.mutate(&bytes, &rng) }
            Self.check(bytes, into: &tally)
        }
        #expect(tally.total == 10_000)
        #expect(tally.complete > 100, "some mutants stay valid")
        #expect(tally.invalid.count >= 8, "\(tally.invalid)")
        print("fuzz mutated: \(tally)")
    }

    /// One mutation of the kinds libFuzzer uses, plus length-field surgery.
    static func mutate(_ bytes: inout [UInt8], _ rng: inout XorShift) {
        let position = rng.below(bytes.count)
        switch rng.below(8) {
        case 0 where !bytes.isEmpty: bytes[position] ^= 1 << UInt8(rng.below(8))
        case 1 where !bytes.isEmpty: bytes[position] = rng.byte()
        case 2: bytes.insert(rng.byte(), at: min(position, bytes.count))
        case 3 where !bytes.isEmpty: bytes.remove(at: position)
        case 4: bytes.removeLast(rng.below(bytes.count + 1))
        case 5:
            let interesting: [UInt32] = [0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFF_FFFF, 0xFFFF_FFFF, 32, 16, 65536]
            let value = Bytes.be32(interesting[rng.below(interesting.count)])
            for i in 0..<4 where position + i < bytes.count { bytes[position + i] = value[i] }
        case 6:
            // Keep the header's body length consistent after a change, so the body parser is exercised.
            if bytes.count >= 16 { bytes.replaceSubrange(12..<16, with: Bytes.be32(UInt32(bytes.count - 16))) }
        default:
            let start = rng.below(bytes.count)
            let chunk = bytes[start..<min(bytes.count, start + rng.below(16))]
            bytes.insert(contentsOf: chunk, at: rng.below(bytes.count + 1))
        }
    }
}
