import ArcaCrypto
import FoundationEssentials

/// A host's two key pairs. Only the 64 secret bytes (Ed25519 seed ‖ X25519 secret) are
/// stored, in the host's system vault, ThisDeviceOnly.
public final class HostKeys: Sendable {
    /// The Ed25519 seed.
    public let signSeed: SecretBytes
    /// The X25519 secret key.
    public let boxSecret: SecretBytes
    public let signPublicKey: [UInt8]
    public let boxPublicKey: [UInt8]

    /// Keys from their 64 stored bytes.
    public init(stored: SecretBytes) throws {
        guard stored.count == 64 else { throw FleetError.crypto("host key material must be 64 bytes") }
        signSeed = try stored.withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<32])) }
        boxSecret = try stored.withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[32...])) }
        signPublicKey = try FleetSodium.signPublicKey(seed: signSeed)
        boxPublicKey = try FleetSodium.boxPublicKey(secret: boxSecret)
    }

    /// 64 fresh random bytes for `init(stored:)`.
    public static func generateStored() throws -> SecretBytes { try SecretBytes.random(count: 64) }

    /// The join record this host publishes.
    public func joinRecord(host: String) -> HostRecord {
        HostRecord(host: host, signPublicKey: Data(signPublicKey), boxPublicKey: Data(boxPublicKey), groups: [])
    }
}

/// The admin's Ed25519 key.
public final class AdminKey: Sendable {
    public let seed: SecretBytes
    public let publicKey: [UInt8]

    public init(seed: SecretBytes) throws {
        self.seed = seed
        publicKey = try FleetSodium.signPublicKey(seed: seed)
    }

    /// The public key as pinned in fleet.conf: base64.
    public var publicKeyText: String { Data(publicKey).base64EncodedString() }
}

/// Sealing and opening one item version.
public enum ItemSealing {
    static func context(_ item: ItemRecord) -> [UInt8] {
        Array("arca-fleet-item\0\(item.id)\0\(item.version)\0\(item.group)\0\(item.epoch)".utf8)
    }

    /// Fills `wrappedKey` and `ciphertext` of `item` (whose other fields are set) for `secret`.
    public static func seal(_ secret: SecretBytes, into item: inout ItemRecord, groupKey: SecretBytes) throws {
        let dataKey = try SecretBytes.random(count: AEAD.keyLength)
        item.wrappedKey = Data(try KeyWrap.wrap(dataKey, with: groupKey, context: context(item)))
        item.ciphertext = Data(try AEAD.seal(secret, key: dataKey, associatedData: context(item)).combined)
    }

    /// The secret of `item`, given the group key; altered bytes → `FleetError.verification`.
    public static func open(_ item: ItemRecord, groupKey: SecretBytes) throws(FleetError) -> SecretBytes {
        do {
            let dataKey = try KeyWrap.unwrap(Array(item.wrappedKey), with: groupKey, context: context(item))
            return try AEAD.open(
                SealedBox(combined: Array(item.ciphertext)), key: dataKey,
                associatedData: context(item))
        } catch {
            throw .verification("item \(item.id) v\(item.version): does not decrypt with group \(item.group)")
        }
    }

    /// A group key sealed to `host`.
    public static func sealGroupKey(
        _ groupKey: SecretBytes, group: String, epoch: UInt64, to host: HostRecord
    ) throws -> GroupKeyRecord {
        GroupKeyRecord(
            group: group, epoch: epoch, host: host.host,
            sealedKey: Data(try FleetSodium.seal(groupKey, to: Array(host.boxPublicKey))))
    }

    /// Opens a group key sealed to this host.
    public static func openGroupKey(_ record: GroupKeyRecord, keys: HostKeys) throws(FleetError) -> SecretBytes {
        do {
            return try FleetSodium.sealOpen(
                Array(record.sealedKey), publicKey: keys.boxPublicKey,
                secret: keys.boxSecret)
        } catch let error as FleetError { throw error } catch { throw .crypto("\(error)") }
    }
}
