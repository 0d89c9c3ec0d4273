import ArcaCrypto

/// What a record carries sealed: the item's encoded attributes and its secret.
public struct RecordBody: Sendable {
    /// The item's attributes, encoded by the vault layer (opaque here).
    public var attributes: [UInt8]
    /// The item's secret (none for a tombstone).
    public var secret: SecretBytes?

    /// A body from its parts.
    public init(attributes: [UInt8], secret: SecretBytes?) {
        self.attributes = attributes
        self.secret = secret
    }

    /// u32 length ‖ attributes ‖ u8 has-secret ‖ secret, in guarded memory.
    func encoded() throws -> SecretBytes {
        let total = 4 + attributes.count + 1 + (secret?.count ?? 0)
        return try SecretBytes(count: total) { out in
            var w = ByteWriter()
            w.lengthPrefixed(attributes)
            w.u8(secret == nil ? 0 : 1)
            out.copyBytes(from: w.bytes)
            if let secret {
                secret.withUnsafeBytes { s in
                    UnsafeMutableRawBufferPointer(rebasing: out[w.bytes.count...]).copyMemory(from: s)
                }
            }
        }
    }

    static func decode(_ plain: SecretBytes) throws -> RecordBody {
        try plain.withUnsafeBytes { p in
            // Only the attribute part is copied out of guarded memory; the secret is sliced.
            let headLength = min(p.count, 4)
            var r = ByteReader(Array(p[0..<headLength]))
            let n = Int(try r.u32("body attributes length"))
            guard 4 + n + 1 <= p.count else { throw SyncError.malformed("truncated body") }
            let attributes = Array(p[4..<4 + n])
            let flag = p[4 + n]
            let rest = 4 + n + 1
            switch flag {
            case 0:
                guard rest == p.count else { throw SyncError.malformed("trailing bytes after body") }
                return RecordBody(attributes: attributes, secret: nil)
            case 1:
                return RecordBody(attributes: attributes, secret: try plain.slice(rest..<p.count))
            default:
                throw SyncError.malformed("body secret flag \(flag)")
            }
        }
    }
}

/// One immutable record file: a header, the per-record key wrapped by the epoch key, the
/// sealed body and the author's Ed25519 signature. Layout:
///
/// ```
/// u16 header length | header | wrapped record key (72) | u32 body length | body (nonce ‖ ct ‖ tag)
/// | signature 64 over "arca-sync-record-v1" ‖ everything before it
/// ```
///
/// The record key is wrapped with the header (prefixed by "arca-sync-rk") as context and the
/// body sealed with the header as associated data, so no header field can be changed without
/// the body failing to open, even by a member that holds the epoch key and could re-sign.
public struct SyncRecord: Sendable, Hashable {
    static let signatureDomain: [UInt8] = Array("arca-sync-record-v1".utf8)
    static let keyContext: [UInt8] = Array("arca-sync-rk".utf8)
    /// The largest record accepted (a body with the largest vault item and its attributes).
    public static let maxLength = 1 << 20

    /// The decoded header.
    public let header: RecordHeader
    /// The record key wrapped under the epoch key.
    public let wrappedKey: [UInt8]
    /// The sealed body, nonce ‖ ciphertext ‖ tag.
    public let body: [UInt8]
    /// The author's signature.
    public let signature: [UInt8]
    /// The record's bytes, exactly as signed and stored.
    public let bytes: [UInt8]

    /// BLAKE2b-256 of the record's bytes: its identity in the author's chain and as a parent.
    public let hash: Digest

    /// Seals `body` under a fresh record key wrapped by `epochKey` and signs the result.
    public static func seal(header: RecordHeader, body: RecordBody, epochKey: SecretBytes, signer: SigningKey) throws
        -> SyncRecord
    {
        guard signer.publicKey == header.author.bytes else { throw SyncError.forged(header.author) }
        guard header.parents.count <= RecordHeader.maxParents else { throw SyncError.malformed("too many parents") }
        let h = header.encoded
        let recordKey = try SecretBytes.random(count: 32)
        let wrapped = try KeyWrap.wrap(recordKey, with: epochKey, context: keyContext + h)
        let sealed = try AEAD.seal(try body.encoded(), key: recordKey, associatedData: h).combined
        var w = ByteWriter()
        w.u16(UInt16(h.count))
        w.raw(h)
        w.raw(wrapped)
        w.lengthPrefixed(sealed)
        let signature = try signer.sign(signatureDomain + w.bytes)
        w.raw(signature)
        return try SyncRecord(parsing: w.bytes)
    }

    /// Parses a record without verifying it: every input gives a record or `SyncError.malformed`.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= Self.maxLength else { throw SyncError.malformed("record larger than 1 MiB") }
        var r = ByteReader(bytes)
        let headerLength = Int(try r.u16("header length"))
        header = try RecordHeader(decoding: try r.raw(headerLength, "header"))
        wrappedKey = try r.raw(KeyWrap.wrappedLength, "wrapped key")
        body = try r.lengthPrefixed("body", limit: Self.maxLength)
        guard body.count >= AEAD.nonceLength + AEAD.tagLength else { throw SyncError.malformed("body too short") }
        signature = try r.raw(SigningKey.signatureLength, "signature")
        try r.expectEnd("record")
        self.bytes = bytes
        hash = Digest.of(bytes)
    }

    /// Whether the signature is the author's over the record.
    public var signatureIsValid: Bool {
        SigningKey.verify(
            signature, of: Self.signatureDomain + Array(bytes.dropLast(SigningKey.signatureLength)),
            publicKey: header.author.bytes)
    }

    /// Opens the body with the epoch key. Altered header or body → `SyncError.undecryptable`.
    public func open(epochKey: SecretBytes) throws -> RecordBody {
        let h = header.encoded
        do {
            let recordKey = try KeyWrap.unwrap(wrappedKey, with: epochKey, context: Self.keyContext + h)
            let plain = try AEAD.open(SealedBox(combined: body), key: recordKey, associatedData: h)
            return try RecordBody.decode(plain)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError.undecryptable(header.author, seq: header.seq)
        }
    }

    public static func == (a: SyncRecord, b: SyncRecord) -> Bool { a.bytes == b.bytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}
