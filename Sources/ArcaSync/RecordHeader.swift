/// The cleartext header of a sync record, the AEAD's associated data and part of what the
/// author signs. Layout, big-endian, 111 + 32·P bytes:
///
/// ```
/// "ARS1" | version u8 = 1 | flags u8 (bit 0: deleted) | ref 16 | hlc wall u64 | hlc counter u32
/// | author 32 | seq u64 | previous record hash 32 | epoch u32 | P u8 (≤ 16) | parents 32·P
/// ```
///
/// `parents` are the hashes of the versions of this item that the author had when it wrote
/// the record (none for a creation; all current versions for a resolution): two records with
/// a common parent and neither the other's parent are concurrent edits.
public struct RecordHeader: Sendable, Hashable {
    static let magic: [UInt8] = Array("ARS1".utf8)
    static let version: UInt8 = 1
    /// The most parents a record may name.
    public static let maxParents = 16

    /// The item's reference.
    public var ref: ItemRef
    /// The author's clock when it wrote the record.
    public var clock: HLCTimestamp
    /// The author.
    public var author: DeviceID
    /// The author's sequence number, from 1 without gaps.
    public var seq: UInt64
    /// Hash of the author's previous record (zero for seq 1).
    public var previous: Digest
    /// Whether this record deletes the item (a tombstone).
    public var deleted: Bool
    /// The circle key epoch the record key is wrapped under.
    public var epoch: UInt32
    /// The versions this record supersedes.
    public var parents: [Digest]

    /// A header from its fields.
    public init(
        ref: ItemRef, clock: HLCTimestamp, author: DeviceID, seq: UInt64, previous: Digest,
        deleted: Bool, epoch: UInt32, parents: [Digest]
    ) {
        self.ref = ref
        self.clock = clock
        self.author = author
        self.seq = seq
        self.previous = previous
        self.deleted = deleted
        self.epoch = epoch
        self.parents = parents
    }

    /// The encoded header.
    public var encoded: [UInt8] {
        var w = ByteWriter()
        w.raw(Self.magic)
        w.u8(Self.version)
        w.u8(deleted ? 1 : 0)
        w.raw(ref.bytes)
        w.u64(clock.wallMillis)
        w.u32(clock.counter)
        w.raw(author.bytes)
        w.u64(seq)
        w.raw(previous.bytes)
        w.u32(epoch)
        w.u8(UInt8(parents.count))
        for p in parents { w.raw(p.bytes) }
        return w.bytes
    }

    /// Decodes a header; every input gives a header or `SyncError.malformed`.
    public init(decoding bytes: [UInt8]) throws {
        var r = ByteReader(bytes)
        guard try r.raw(4, "magic") == Self.magic else { throw SyncError.malformed("not a sync record") }
        let version = try r.u8("version")
        guard version == Self.version else { throw SyncError.malformed("record version \(version)") }
        let flags = try r.u8("flags")
        guard flags & ~1 == 0 else { throw SyncError.malformed("unknown record flags \(flags)") }
        deleted = flags == 1
        ref = ItemRef(unchecked: try r.raw(16, "ref"))
        clock = HLCTimestamp(wallMillis: try r.u64("clock"), counter: try r.u32("clock"))
        author = try DeviceID(r.raw(32, "author"))
        seq = try r.u64("seq")
        guard seq >= 1 else { throw SyncError.malformed("sequence number 0") }
        previous = Digest(unchecked: try r.raw(32, "previous hash"))
        epoch = try r.u32("epoch")
        let count = Int(try r.u8("parent count"))
        guard count <= Self.maxParents else { throw SyncError.malformed("\(count) parents") }
        parents = try (0..<count).map { _ in Digest(unchecked: try r.raw(32, "parent")) }
        try r.expectEnd("header")
    }
}
