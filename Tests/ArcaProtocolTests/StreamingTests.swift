import ArcaProtocol
import Testing

/// `Frame.scan` / `Frame.decode` as a non-blocking reader uses them.
@Suite("Streaming")
struct StreamingTests {
    @Test("byte by byte: need N more, then one complete frame")
    func byteByByte() throws {
        let frame = try Frame.encode(Request.unlock(uid: 1000, key: Fixtures.key), requestID: 9)
        #expect(frame.count == 56)
        for available in 0..<frame.count {
            let prefix = Array(frame.prefix(available))
            let needed = available < 16 ? 16 - available : frame.count - available
            #expect(Frame.scan(prefix) == .needMore(needed), "at \(available)")
            #expect(Frame.decode(prefix, as: Request.self) == .needMore(needed), "at \(available)")
        }
        #expect(Frame.scan(frame) == .complete(length: 56))
        #expect(Frame.scan(frame + [0x41, 0x52]) == .complete(length: 56))
    }

    @Test("garbage is refused as soon as its bytes arrive")
    func earlyRejection() {
        #expect(Frame.scan([0x41, 0x52, 0x58]) == .invalid(.badMagic))
        #expect(Frame.scan(Frame.magic + [0, 9]) == .invalid(.unsupportedVersion(9)))
        #expect(Frame.scan(Frame.magic + [0, 1, 0x7F, 0xFF]) == .invalid(.unknownKind(0x7FFF)))
        #expect(Frame.scan(Frame.magic + [0, 1, 0, 1]) == .needMore(8))
    }

    @Test("a reader loop over a stream of frames split at random points")
    func readerLoop() throws {
        var stream: [UInt8] = []
        var expected: [Request] = []
        for (index, request) in Fixtures.requests.enumerated() {
            stream += try Frame.encode(request, requestID: UInt32(index))
            expected.append(request)
        }
        var rng = XorShift(seed: 42)
        var buffer: [UInt8] = []
        var received: [Request] = []
        var offset = 0
        while offset < stream.count {
            let chunk = min(stream.count - offset, 1 + Int(rng.next() % 700))
            buffer += stream[offset..<offset + chunk]
            offset += chunk
            decoding: while true {
                switch Frame.decode(buffer, as: Request.self) {
                case .needMore: break decoding
                case .invalid(let error):
                    Issue.record("unexpected \(error)")
                    return
                case .complete(let frame):
                    #expect(frame.requestID == UInt32(received.count))
                    received.append(frame.message)
                    SecureWipe.removeFirst(frame.length, from: &buffer)
                }
            }
        }
        #expect(received == expected)
        #expect(buffer.isEmpty)
    }
}
