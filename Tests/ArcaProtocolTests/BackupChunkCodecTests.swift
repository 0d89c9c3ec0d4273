import ArcaProtocol
import Testing

/// The chunked backup requests (0x003E-0x0041) and replies (0x8029-0x802B): pinned bytes, and
/// every out-of-range piece refused by the decoder (before arcad sees it) and by the encoder.
@Suite("Backup chunk codec")
struct BackupChunkCodecTests {
    typealias B = Bytes
    static let uid = B.be32(1000)
    static func be64(_ v: UInt64) -> [UInt8] { B.be32(UInt32(v >> 32)) + B.be32(UInt32(v & 0xFFFF_FFFF)) }
    static func stageImport(total: UInt64, offset: UInt64, chunk: [UInt8]) -> [UInt8] {
        B.frame(kind: MessageKind.stageImport.rawValue, body: uid + be64(total) + be64(offset) + B.field(chunk))
    }

    @Test("stageImport and backupReceived, byte for byte")
    func golden() throws {
        let request = Request.stageImport(uid: 1000, total: 7, offset: 4, chunk: [0xAB, 0xCD])
        #expect(
            B.hex(try Frame.encode(request, requestID: 9))
                == "41524341" + "0001" + "0040" + "00000009" + "0000001a" + "000003e8" + "0000000000000007"
                + "0000000000000004" + "00000002abcd")
        #expect(decodeRequest(try Frame.encode(request, requestID: 9)) == .success(request))
        #expect(
            B.hex(try Frame.encode(Reply.backupReceived(length: 6), requestID: 9))
                == "41524341" + "0001" + "802b" + "00000009" + "00000008" + "0000000000000006")
        #expect(MessageKind.stageExport.rawValue == 0x003E && MessageKind.readExport.rawValue == 0x003F)
        #expect(MessageKind.importStaged.rawValue == 0x0041 && MessageKind.backupStaged.rawValue == 0x8029)
        #expect(MessageKind.backupChunk.rawValue == 0x802A)
    }

    @Test("a piece over 1 MiB, outside its backup, of an empty or oversized backup: refused")
    func malformedPieces() {
        let tooLong = [UInt8](repeating: 1, count: ProtocolLimits.maximumBackupChunkLength + 1)
        #expect(
            decodeRequest(Self.stageImport(total: 4 << 20, offset: 0, chunk: tooLong))
                == .failure(.fieldTooLong(field: "chunk", length: 1_048_577, limit: 1_048_576)))
        #expect(
            decodeRequest(Self.stageImport(total: 0, offset: 0, chunk: [])) == .failure(.invalidValue(field: "total")))
        #expect(
            decodeRequest(Self.stageImport(total: (1 << 40) + 1, offset: 0, chunk: [1]))
                == .failure(.invalidValue(field: "total")))
        // Starting at or past the end, or running past it (overlap with nothing: out of range).
        #expect(
            decodeRequest(Self.stageImport(total: 4, offset: 4, chunk: [1])) == .failure(.invalidValue(field: "offset"))
        )
        #expect(
            decodeRequest(Self.stageImport(total: 4, offset: 2, chunk: [1, 2, 3]))
                == .failure(.invalidValue(field: "offset")))
        #expect(
            decodeRequest(Self.stageImport(total: 4, offset: .max, chunk: [1]))
                == .failure(.invalidValue(field: "offset")))
        let read = B.frame(kind: MessageKind.readExport.rawValue, body: Self.uid + Self.be64((1 << 40) + 1))
        #expect(decodeRequest(read) == .failure(.invalidValue(field: "offset")))
        let staged = B.frame(kind: MessageKind.backupStaged.rawValue, body: Self.be64(.max))
        #expect(decodeReply(staged) == .failure(.invalidValue(field: "length")))
        let chunk = B.frame(kind: MessageKind.backupChunk.rawValue, body: B.be32(UInt32(1 << 20) + 1))
        #expect(decodeReply(chunk) == .failure(.fieldTooLong(field: "chunk", length: 1_048_577, limit: 1_048_576)))
        // A truncated piece: the header of the field says more than the frame holds.
        let short = B.frame(
            kind: MessageKind.stageImport.rawValue, body: Self.uid + Self.be64(8) + Self.be64(0) + B.be32(8) + [1, 2])
        #expect(decodeRequest(short) == .failure(.truncated))
    }

    @Test("the encoder refuses what the decoder would")
    func encoderRefuses() {
        #expect(throws: ProtocolError.invalidValue(field: "offset")) {
            try Frame.encode(Request.stageImport(uid: 1, total: 2, offset: 1, chunk: [1, 2]), requestID: 1)
        }
        #expect(throws: ProtocolError.invalidValue(field: "total")) {
            try Frame.encode(Request.stageImport(uid: 1, total: 0, offset: 0, chunk: []), requestID: 1)
        }
        #expect(throws: ProtocolError.self) {
            try Frame.encode(
                Reply.backupChunk([UInt8](repeating: 0, count: ProtocolLimits.maximumBackupChunkLength + 1)),
                requestID: 1)
        }
    }
}
