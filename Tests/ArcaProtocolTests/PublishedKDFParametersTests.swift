import Testing

@testable import ArcaProtocol

/// The file arcad publishes for pam_arca: the layout of PublishedKDFParameters' doc, byte by byte.
@Suite struct PublishedKDFParametersTests {
    let sample = PublishedKDFParameters(
        publisherPID: 0x0102_0304, publisherStartTime: 0x1122_3344_5566_7788, uid: 1000,
        parameters: KeyDerivationParameters(opsLimit: 3, memoryLimit: 64 << 20, salt: Array(0..<16)))

    @Test func goldenBytes() throws {
        let expected: [UInt8] =
            Array("ARCAKDF1".utf8) + [0x04, 0x03, 0x02, 0x01] + [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
            + [0xE8, 0x03, 0, 0] + [3, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 4, 0, 0, 0, 0] + Array(0..<16)
        #expect(sample.encoded() == expected)
        #expect(expected.count == PublishedKDFParameters.length)
        #expect(try PublishedKDFParameters(decoding: expected) == sample)
    }

    @Test func malformedFilesAreNamedErrors() {
        let good = sample.encoded()
        #expect(throws: ProtocolError.wrongLength(field: "published KDF parameters", length: 55, expected: 56)) {
            try PublishedKDFParameters(decoding: Array(good.dropLast()))
        }
        #expect(throws: ProtocolError.wrongLength(field: "published KDF parameters", length: 57, expected: 56)) {
            try PublishedKDFParameters(decoding: good + [0])
        }
        #expect(throws: ProtocolError.wrongLength(field: "published KDF parameters", length: 0, expected: 56)) {
            try PublishedKDFParameters(decoding: [])
        }
        var wrongMagic = good
        wrongMagic[7] = UInt8(ascii: "2")
        #expect(throws: ProtocolError.badMagic) { try PublishedKDFParameters(decoding: wrongMagic) }
    }

    @Test func pathsSitNextToTheSocket() {
        #expect(PublishedKDFParameters.directory(socketPath: "/run/arca/arcad.sock") == "/run/arca/arcad.sock.kdf")
        #expect(PublishedKDFParameters.path(socketPath: "/tmp/x/s", uid: 1001) == "/tmp/x/s.kdf/1001")
    }
}
