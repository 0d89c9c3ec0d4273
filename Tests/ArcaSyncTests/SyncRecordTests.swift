import ArcaCrypto
import Testing

@testable import ArcaSync

@Suite struct SyncRecordTests {
    let a = Fixture.signer(1)
    let m = Fixture.signer(2)
    let epochKey = Fixture.secret(0xEE)

    func header(author: SigningKey, seq: UInt64 = 1, parents: [Digest] = [], deleted: Bool = false) -> RecordHeader {
        RecordHeader(
            ref: try! ItemRef([UInt8](repeating: 0xAB, count: 16)), clock: HLCTimestamp(wallMillis: 1234, counter: 5),
            author: try! DeviceID(author.publicKey), seq: seq, previous: .zero, deleted: deleted, epoch: 0,
            parents: parents)
    }

    @Test func headerLayoutIsExact() throws {
        let h = header(author: a, parents: [Digest.of([1])])
        let bytes = h.encoded
        #expect(bytes.count == 111 + 32)
        #expect(Array(bytes[0..<6]) == [0x41, 0x52, 0x53, 0x31, 1, 0])  // "ARS1", v1, not deleted
        #expect(Array(bytes[22..<34]) == [0, 0, 0, 0, 0, 0, 0x04, 0xD2, 0, 0, 0, 5])  // clock 1234.5
        #expect(try RecordHeader(decoding: bytes) == h)
        #expect(throws: SyncError.malformed("unknown record flags 2")) {
            var b = bytes
            b[5] = 2
            _ = try RecordHeader(decoding: b)
        }
    }

    @Test func sealParseOpenRoundTrip() throws {
        let record = try SyncRecord.seal(
            header: header(author: a), body: Fixture.body("svc=mail", "hunter2"), epochKey: epochKey, signer: a)
        // 2 + header 111 + wrapped key 72 + 4 + (24 + (4 + 8 + 1 + 7) + 16) + signature 64
        #expect(record.bytes.count == 2 + 111 + 72 + 4 + 24 + 20 + 16 + 64)
        let parsed = try SyncRecord(parsing: record.bytes)
        #expect(parsed.header == header(author: a))
        #expect(parsed.signatureIsValid)
        let body = try parsed.open(epochKey: epochKey)
        #expect(body.attributes == Array("svc=mail".utf8))
        #expect(Fixture.text(body.secret) == "hunter2")
        #expect(
            try SyncRecord.seal(
                header: header(author: a), body: Fixture.body("x", nil), epochKey: epochKey, signer: a
            ).open(epochKey: epochKey).secret == nil)
    }

    @Test func nothingInTheRecordIsInTheClear() throws {
        let record = try SyncRecord.seal(
            header: header(author: a), body: Fixture.body("service=bank-of-arca", "correct horse"),
            epochKey: epochKey, signer: a)
        for needle in ["bank-of-arca", "correct horse"] {
            let n = Array(needle.utf8)
            let found = (0...(record.bytes.count - n.count)).contains { Array(record.bytes[$0..<$0 + n.count]) == n }
            #expect(!found, "\(needle) in clear")
        }
    }

    @Test func aWrongEpochKeyDoesNotOpen() throws {
        let record = try SyncRecord.seal(
            header: header(author: a), body: Fixture.body("x", "y"), epochKey: epochKey, signer: a)
        #expect(throws: SyncError.undecryptable(try DeviceID(a.publicKey), seq: 1)) {
            _ = try record.open(epochKey: Fixture.secret(0xEF))
        }
    }

    @Test func aSignerOtherThanTheAuthorIsRefused() {
        #expect(throws: SyncError.forged(try! DeviceID(a.publicKey))) {
            _ = try SyncRecord.seal(
                header: header(author: a), body: Fixture.body("x", nil), epochKey: epochKey, signer: m)
        }
    }

    /// Attack: a member that holds the epoch key lifts another author's sealed key and body into
    /// a record of its own (its own header, its own valid signature). The header is the key
    /// wrap's context and the body's associated data, so the body does not open.
    @Test func aMemberCannotReuseAnotherAuthorsBodyUnderItsOwnHeader() throws {
        let original = try SyncRecord.seal(
            header: header(author: a), body: Fixture.body("x", "secret"), epochKey: epochKey, signer: a)
        let h = header(author: m).encoded
        var w = ByteWriter()
        w.u16(UInt16(h.count))
        w.raw(h)
        w.raw(original.wrappedKey)
        w.lengthPrefixed(original.body)
        w.raw(try m.sign(SyncRecord.signatureDomain + w.bytes))
        let lifted = try SyncRecord(parsing: w.bytes)
        #expect(lifted.signatureIsValid)
        #expect(throws: SyncError.undecryptable(try DeviceID(m.publicKey), seq: 1)) {
            _ = try lifted.open(epochKey: epochKey)
        }
    }

    @Test func truncationsAreMalformedNeverACrash() throws {
        let record = try SyncRecord.seal(
            header: header(author: a), body: Fixture.body("x", "y"), epochKey: epochKey, signer: a)
        for n in 0..<record.bytes.count {
            #expect(throws: SyncError.self) { _ = try SyncRecord(parsing: Array(record.bytes.prefix(n))) }
        }
        #expect(throws: SyncError.malformed("1 trailing bytes after record")) {
            _ = try SyncRecord(parsing: record.bytes + [0])
        }
    }

    @Test func sealedKeyBoxOpensOnlyForItsRecipient() throws {
        let box = try SealedKeyBox.seal(epochKey, to: m.publicKey)
        #expect(box.count == 32 + 48)
        #expect(try SealedKeyBox.open(box, with: m) == epochKey)
        #expect(throws: CryptoError.authenticationFailed) { _ = try SealedKeyBox.open(box, with: a) }
        var flipped = box
        flipped[40] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { _ = try SealedKeyBox.open(flipped, with: m) }
    }

    @Test func ed25519KnownAnswer() throws {
        // RFC 8032, section 7.1, TEST 1 (empty message).
        let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
        var s = seed
        let key = try SigningKey(seed: SecretBytes(consuming: &s))
        #expect(Hex.encode(key.publicKey) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        let sig = try key.sign([])
        #expect(
            Hex.encode(sig) == "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        #expect(SigningKey.verify(sig, of: [], publicKey: key.publicKey))
        #expect(!SigningKey.verify(sig, of: [0], publicKey: key.publicKey))
    }
}
