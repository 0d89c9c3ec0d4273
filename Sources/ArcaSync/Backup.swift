import ArcaCrypto

/// What a backup is sealed to.
public enum BackupSeal: Sendable {
    /// The vault's recovery key (its 32 raw bytes).
    case recoveryKey(SecretBytes)
    /// A passphrase, stretched with Argon2id with these parameters (salt included).
    case passphrase(SecretBytes, KDFParameters)
}

/// How a backup opens: the recovery key, or a passphrase (its parameters are in the file).
public enum BackupOpener: Sendable {
    /// The vault's recovery key.
    case recoveryKey(SecretBytes)
    /// The passphrase given at export.
    case passphrase(SecretBytes)
}

/// An encrypted backup (`arca export`): the records of a one-device circle made for the
/// file, whose epoch key is wrapped under the recovery key or an Argon2id passphrase key.
/// Layout, big-endian:
///
/// ```
/// "ARB1" | mode u8 (1 recovery key, 2 passphrase) | [mode 2: ops u64 | memory u64 | salt 16]
/// | author 32 | wrapped epoch key 72 (context "arca-backup-v1" ‖ everything before it)
/// | u32 N | (u32 length, record)·N | head
/// ```
///
/// Reading verifies every record exactly as sync does (signature, chain, AEAD), and the head
/// proves no record was dropped from the end.
public enum Backup {
    static let magic: [UInt8] = Array("ARB1".utf8)
    static let context: [UInt8] = Array("arca-backup-v1".utf8)
    /// The most items a backup may hold.
    public static let maxRecords = 1 << 20

    /// Whether `bytes` look like a backup sealed to a passphrase (else to the recovery key).
    public static func isSealedToPassphrase(_ bytes: [UInt8]) -> Bool { bytes.count > 4 && bytes[4] == 2 }

    /// Seals `bodies` into backup bytes.
    public static func write(_ bodies: [RecordBody], to seal: BackupSeal, clock: any ClockSource) throws -> [UInt8] {
        let signer = try SigningKey.generate()
        let author = try DeviceID(signer.publicKey)
        let epochKey = try SecretBytes.random(count: 32)
        var replica = try SyncReplica(
            signer: signer, circle: Circle(devices: [author], epoch: 0, key: epochKey),
            clock: HybridLogicalClock(source: clock))
        var w = ByteWriter()
        w.raw(magic)
        let wrappingKey: SecretBytes
        switch seal {
        case .recoveryKey(let key):
            w.u8(1)
            wrappingKey = key
        case .passphrase(let passphrase, let parameters):
            w.u8(2)
            w.u64(parameters.opsLimit)
            w.u64(UInt64(parameters.memoryLimit))
            w.raw(parameters.salt)
            wrappingKey = try Argon2id.deriveKey(password: passphrase, parameters: parameters)
        }
        w.raw(author.bytes)
        w.raw(try KeyWrap.wrap(epochKey, with: wrappingKey, context: context + w.bytes))
        w.u32(UInt32(bodies.count))
        for body in bodies { w.lengthPrefixed(try replica.create(body).1.bytes) }
        w.raw(try replica.head().bytes)
        return w.bytes
    }

    /// Opens backup bytes: the live items' bodies, in the order they were written.
    /// Wrong key or passphrase → `SyncError.backupUnreadable`; anything altered is refused.
    public static func read(_ bytes: [UInt8], with opener: BackupOpener) throws -> [RecordBody] {
        var r = ByteReader(bytes)
        guard try r.raw(4, "backup magic") == magic else { throw SyncError.malformed("not an Arca backup") }
        let mode = try r.u8("backup mode")
        let wrappingKey: SecretBytes
        switch (mode, opener) {
        case (1, .recoveryKey(let key)):
            wrappingKey = key
        case (2, .passphrase(let passphrase)):
            let ops = try r.u64("ops limit")
            let memory = try r.u64("memory limit")
            let salt = try r.raw(KDFParameters.saltLength, "salt")
            guard memory <= UInt64(Argon2id.memoryCeiling()), ops <= 32 else {
                throw SyncError.malformed("backup asks for more Argon2id memory or passes than this machine allows")
            }
            let parameters = KDFParameters(opsLimit: ops, memoryLimit: Int(memory), salt: salt)
            do { wrappingKey = try Argon2id.deriveKey(password: passphrase, parameters: parameters) } catch {
                throw SyncError.malformed("backup Argon2id parameters: \(error)")
            }
        case (1, .passphrase), (2, .recoveryKey):
            throw SyncError.malformed(
                mode == 1 ? "backup is sealed to the recovery key" : "backup is sealed to a passphrase")
        default:
            throw SyncError.malformed("backup mode \(mode)")
        }
        let author = try DeviceID(r.raw(32, "backup author"))
        let prefix = Array(bytes[0..<r.offset])
        let wrapped = try r.raw(KeyWrap.wrappedLength, "wrapped backup key")
        let epochKey: SecretBytes
        do { epochKey = try KeyWrap.unwrap(wrapped, with: wrappingKey, context: context + prefix) } catch {
            throw SyncError.backupUnreadable
        }
        var replica = try SyncReplica(
            signer: SigningKey.generate(), circle: Circle(devices: [author], epoch: 0, key: epochKey),
            clock: HybridLogicalClock(source: SystemClock()))
        let count = Int(try r.u32("record count"))
        guard count <= maxRecords else { throw SyncError.malformed("\(count) records") }
        var order: [ItemRef] = []
        for _ in 0..<count {
            let record = try r.lengthPrefixed("record", limit: SyncRecord.maxLength)
            guard case .applied(let ref, _) = try replica.apply(record) else {
                throw SyncError.malformed("backup record out of order or repeated")
            }
            order.append(ref)
        }
        let head = try SignedHead(parsing: try r.raw(r.remaining, "head"))
        guard head.author == author else { throw SyncError.forged(head.author) }
        try replica.observe(head: head.bytes)
        guard head.seq == UInt64(count) else { throw SyncError.rollback(author, seen: head.seq, got: UInt64(count)) }
        let live = replica.liveItems
        return order.compactMap { live[$0]?.body }
    }
}
