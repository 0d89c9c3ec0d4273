import ArcaCrypto

/// Where one author's log stood when a snapshot was taken.
public struct CutPoint: Sendable, Hashable {
    /// The last sequence number applied.
    public var seq: UInt64
    /// The hash of that record.
    public var hash: Digest

    /// A cut point from its parts.
    public init(seq: UInt64, hash: Digest) {
        self.seq = seq
        self.hash = hash
    }
}

/// What a snapshot says, once opened: the cut it covers, what its author buried (each burial
/// with its own cut), and every version its author held, as the signed records they came in.
public struct SnapshotContents: Sendable {
    /// Per author, how far the snapshot's author had applied that author's log.
    public var cut: [DeviceID: CutPoint]
    /// Every buried item and the cut its burial covers.
    public var burials: [ItemRef: [DeviceID: UInt64]]
    /// The signed records of every version held (empty when they did not fit in one file;
    /// the records are still in their authors' logs).
    public var records: [[UInt8]]

    /// Contents from their parts.
    public init(cut: [DeviceID: CutPoint], burials: [ItemRef: [DeviceID: UInt64]], records: [[UInt8]]) {
        self.cut = cut
        self.burials = burials
        self.records = records
    }

    /// Big-endian: u16 C | (device 32, seq u64, hash 32)·C | u32 B | (ref 16, u16 K,
    /// (device 32, seq u64)·K)·B | u32 R | (u32 length, record)·R.
    var encoded: [UInt8] {
        var w = ByteWriter()
        w.u16(UInt16(cut.count))
        for (device, point) in cut.sorted(by: { $0.key < $1.key }) {
            w.raw(device.bytes)
            w.u64(point.seq)
            w.raw(point.hash.bytes)
        }
        w.u32(UInt32(burials.count))
        for (ref, burialCut) in burials.sorted(by: { $0.key < $1.key }) {
            w.raw(ref.bytes)
            w.u16(UInt16(burialCut.count))
            for (device, seq) in burialCut.sorted(by: { $0.key < $1.key }) {
                w.raw(device.bytes)
                w.u64(seq)
            }
        }
        w.u32(UInt32(records.count))
        for record in records { w.lengthPrefixed(record) }
        return w.bytes
    }

    init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        var cut: [DeviceID: CutPoint] = [:]
        for _ in 0..<(try r.u16("cut count")) {
            let device = try DeviceID(r.raw(32, "cut device"))
            let point = CutPoint(seq: try r.u64("cut seq"), hash: Digest(unchecked: try r.raw(32, "cut hash")))
            guard cut.updateValue(point, forKey: device) == nil else {
                throw SyncError.malformed("cut names a device twice")
            }
        }
        var burials: [ItemRef: [DeviceID: UInt64]] = [:]
        for _ in 0..<(try r.u32("burial count")) {
            let ref = ItemRef(unchecked: try r.raw(16, "buried ref"))
            var burialCut: [DeviceID: UInt64] = [:]
            for _ in 0..<(try r.u16("burial cut count")) {
                burialCut[try DeviceID(r.raw(32, "burial device"))] = try r.u64("burial seq")
            }
            guard burials.updateValue(burialCut, forKey: ref) == nil else {
                throw SyncError.malformed("item buried twice in one snapshot")
            }
        }
        var records: [[UInt8]] = []
        for _ in 0..<(try r.u32("record count")) {
            records.append(try r.lengthPrefixed("snapshot record", limit: SyncRecord.maxLength))
        }
        try r.expectEnd("snapshot contents")
        self.init(cut: cut, burials: burials, records: records)
    }
}

/// A device's signed, sealed snapshot of its replica, published in its own log folder (one
/// writer, rewritten in place like its head) when it collects tombstones. A device that was
/// dormant past the horizon resyncs from it: what it buried stays buried there too, and that
/// device's edits the burier never saw become siblings. Layout, big-endian:
///
/// ```
/// "ARP1" | author 32 | number u64 | epoch u32 | u32 N | sealed contents N (nonce ‖ ct ‖ tag)
/// | signature 64 over "arca-sync-snapshot-v1" ‖ everything before it
/// ```
///
/// The contents are sealed under the epoch key with everything before them as associated
/// data, so nothing (not even which items were buried) is in clear. `number` grows by one per
/// snapshot of the author: an older one restored is a rollback.
public struct Snapshot: Sendable, Hashable {
    static let magic: [UInt8] = Array("ARP1".utf8)
    static let signatureDomain: [UInt8] = Array("arca-sync-snapshot-v1".utf8)
    static let sealContext: [UInt8] = Array("arca-sync-snapshot-seal".utf8)
    /// The largest snapshot file (the largest sync file the agent carries).
    public static let maxLength = 1 << 20

    /// The author.
    public let author: DeviceID
    /// The author's snapshot number, from 1.
    public let number: UInt64
    /// The epoch whose key seals the contents.
    public let epoch: UInt32
    /// The sealed contents.
    public let sealed: [UInt8]
    /// The file's bytes, as signed.
    public let bytes: [UInt8]
    /// BLAKE2b-256 of the bytes.
    public let hash: Digest

    /// Seals and signs `contents`; `SyncError.malformed` if the result exceeds `maxLength`.
    public static func seal(
        _ contents: SnapshotContents, number: UInt64, epoch: UInt32, epochKey: SecretBytes, signer: SigningKey
    ) throws -> Snapshot {
        var w = ByteWriter()
        w.raw(magic)
        w.raw(signer.publicKey)
        w.u64(number)
        w.u32(epoch)
        let sealed = try AEAD.seal(contents.encoded, key: epochKey, associatedData: sealContext + w.bytes).combined
        w.lengthPrefixed(sealed)
        w.raw(try signer.sign(signatureDomain + w.bytes))
        guard w.bytes.count <= maxLength else { throw SyncError.malformed("snapshot larger than 1 MiB") }
        return try Snapshot(parsing: w.bytes)
    }

    /// Parses a snapshot without verifying it: every input gives a snapshot or `SyncError.malformed`.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= Self.maxLength else { throw SyncError.malformed("snapshot larger than 1 MiB") }
        var r = ByteReader(bytes)
        guard try r.raw(4, "magic") == Self.magic else { throw SyncError.malformed("not a sync snapshot") }
        author = try DeviceID(r.raw(32, "author"))
        number = try r.u64("snapshot number")
        guard number >= 1 else { throw SyncError.malformed("snapshot number 0") }
        epoch = try r.u32("epoch")
        sealed = try r.lengthPrefixed("snapshot contents", limit: Self.maxLength)
        guard sealed.count >= AEAD.nonceLength + AEAD.tagLength else { throw SyncError.malformed("snapshot too short") }
        _ = try r.raw(SigningKey.signatureLength, "signature")
        try r.expectEnd("snapshot")
        self.bytes = bytes
        hash = Digest.of(bytes)
    }

    /// Whether the signature is the author's.
    public var signatureIsValid: Bool {
        SigningKey.verify(
            Array(bytes.suffix(SigningKey.signatureLength)),
            of: Self.signatureDomain + Array(bytes.dropLast(SigningKey.signatureLength)), publicKey: author.bytes)
    }

    /// Opens the contents. Altered bytes or the wrong key → `SyncError.undecryptable`.
    public func open(epochKey: SecretBytes) throws -> SnapshotContents {
        let clear = Array(bytes.prefix(4 + 32 + 8 + 4))
        let plain: [UInt8]
        do {
            plain = try AEAD.openBytes(
                SealedBox(combined: sealed), key: epochKey, associatedData: Self.sealContext + clear)
        } catch {
            throw SyncError.undecryptable(author, seq: number)
        }
        return try SnapshotContents(decoding: plain)
    }
}

/// The last snapshot accepted from an author.
struct SnapshotMark: Sendable, Equatable {
    var number: UInt64
    var hash: Digest
}
