import ArcaCrypto

/// The signed head of an author's log: how far the log goes, the hash of its last record
/// (the chain hash), the wall time of the author's hybrid logical clock when it last wrote or
/// applied a record (how recent what it has seen is: a head older than the sync horizon marks
/// a dormant member), and how far the author has applied every other member's log (its
/// acknowledgements, which let tombstones be collected). Rewritten in place by its one
/// writer. Layout, big-endian:
///
/// ```
/// "ARH2" | author 32 | seq u64 | chain hash 32 | clock wall u64 | u16 N | (device 32, seq u64)·N
/// | signature 64 over "arca-sync-head-v1" ‖ everything before it
/// ```
///
/// A head of the earlier format "ARH1" (no clock field) still parses, with wall time 0.
public struct SignedHead: Sendable, Hashable {
    static let magic: [UInt8] = Array("ARH2".utf8)
    static let magicWithoutClock: [UInt8] = Array("ARH1".utf8)
    static let signatureDomain: [UInt8] = Array("arca-sync-head-v1".utf8)

    /// The author.
    public let author: DeviceID
    /// The author's last sequence number.
    public let seq: UInt64
    /// The hash of the author's record `seq` (zero when the log is empty).
    public let chainHash: Digest
    /// The author's hybrid logical clock (wall milliseconds) when it last wrote or applied a record.
    public let wallMillis: UInt64
    /// For each other member, the highest sequence number the author has applied.
    public let acknowledgements: [DeviceID: UInt64]
    /// The head's bytes as signed.
    public let bytes: [UInt8]

    /// Builds and signs a head.
    public static func sign(
        seq: UInt64, chainHash: Digest, wallMillis: UInt64 = 0, acknowledgements: [DeviceID: UInt64],
        signer: SigningKey
    ) throws -> SignedHead {
        var w = ByteWriter()
        w.raw(magic)
        w.raw(signer.publicKey)
        w.u64(seq)
        w.raw(chainHash.bytes)
        w.u64(wallMillis)
        let acks = acknowledgements.sorted { $0.key < $1.key }
        w.u16(UInt16(acks.count))
        for (device, s) in acks {
            w.raw(device.bytes)
            w.u64(s)
        }
        w.raw(try signer.sign(signatureDomain + w.bytes))
        return try SignedHead(parsing: w.bytes)
    }

    /// Parses a head without verifying it: every input gives a head or `SyncError.malformed`.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= 1 << 20 else { throw SyncError.malformed("head larger than 1 MiB") }
        var r = ByteReader(bytes)
        let magic = try r.raw(4, "magic")
        guard magic == Self.magic || magic == Self.magicWithoutClock else {
            throw SyncError.malformed("not a sync head")
        }
        author = try DeviceID(r.raw(32, "author"))
        seq = try r.u64("seq")
        chainHash = Digest(unchecked: try r.raw(32, "chain hash"))
        wallMillis = magic == Self.magic ? try r.u64("clock") : 0
        let n = Int(try r.u16("acknowledgement count"))
        var acks: [DeviceID: UInt64] = [:]
        for _ in 0..<n {
            let device = try DeviceID(r.raw(32, "acknowledged device"))
            guard acks.updateValue(try r.u64("acknowledged seq"), forKey: device) == nil else {
                throw SyncError.malformed("device acknowledged twice")
            }
        }
        acknowledgements = acks
        _ = try r.raw(SigningKey.signatureLength, "signature")
        try r.expectEnd("head")
        self.bytes = bytes
    }

    /// Whether the signature is the author's.
    public var signatureIsValid: Bool {
        SigningKey.verify(
            Array(bytes.suffix(SigningKey.signatureLength)),
            of: Self.signatureDomain + Array(bytes.dropLast(SigningKey.signatureLength)), publicKey: author.bytes)
    }
}
