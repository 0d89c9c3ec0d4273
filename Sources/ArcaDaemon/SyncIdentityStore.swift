import ArcaCrypto
import ArcaSync

#if canImport(Glibc)
    import Glibc
#endif

/// One user's sync identity on this machine: the device's Ed25519 key and the circle's
/// current epoch key (issue 17, layer 3).
struct SyncIdentity {
    /// The device's signing key; its public key is the device id.
    let signer: SigningKey
    /// The epoch new records are sealed under.
    let epoch: UInt32
    /// That epoch's key.
    let epochKey: SecretBytes

    var device: DeviceID { get throws { try DeviceID(signer.publicKey) } }
}

/// `<state>/sync/<uid>.identity`: arcad's own file (0600 root, in its 0700 state directory;
/// never in a user-controlled directory). Layout, 152 bytes:
/// `"ASY1"` ‖ epoch u32 BE ‖ wrapped device seed (72) ‖ wrapped epoch key (72), each
/// wrapped (XChaCha20-Poly1305) under `Vault.syncStateKey()` with a context naming its role,
/// the uid and (for the epoch key) the epoch, so no field can stand in for another.
enum SyncIdentityStore {
    static let magic = Array("ASY1".utf8)
    static let fileLength = magic.count + 4 + 2 * KeyWrap.wrappedLength

    static func path(_ stateDirectory: String, uid: UInt32) -> String { "\(stateDirectory)/sync/\(uid).identity" }

    /// Creates a new identity and circle for `uid` (`arca sync init`): a random device key
    /// and a random epoch-0 key. An existing identity is never replaced (`errSecDuplicateItem`).
    static func create(in stateDirectory: String, uid: UInt32, key: SecretBytes) throws(HandlerError) -> SyncIdentity {
        let path = path(stateDirectory, uid: uid)
        if try StateDirectory.existingFile(path) {
            throw HandlerError(.duplicateItem, "sync is already set up for this user on this machine")
        }
        let identity: SyncIdentity
        let bytes: [UInt8]
        do {
            identity = SyncIdentity(
                signer: try SigningKey.generate(), epoch: 0, epochKey: try SecretBytes.random(count: 32))
            bytes = try encode(identity, uid: uid, key: key)
        } catch {
            throw HandlerError(.internalComponent, "cannot make a sync identity: \(error)")
        }
        try SyncStore.writeAtomically(path, bytes, directory: "\(stateDirectory)/sync")
        return identity
    }

    /// The identity of `uid`, or nil if sync is not set up. A file that does not open with
    /// `key` (altered, or another vault's) is `errSecDecode`, never silently replaced.
    static func load(from stateDirectory: String, uid: UInt32, key: SecretBytes) throws(HandlerError) -> SyncIdentity? {
        let path = path(stateDirectory, uid: uid)
        guard let bytes = try SyncStore.readPrivate(path, limit: fileLength + 1) else { return nil }
        do { return try decode(bytes, uid: uid, key: key) } catch {
            throw HandlerError(.decode, "\(path) does not open with this vault's key (damaged or not this vault's)")
        }
    }

    static func encode(_ identity: SyncIdentity, uid: UInt32, key: SecretBytes) throws -> [UInt8] {
        let seed = try KeyWrap.wrap(try identity.signer.seed(), with: key, context: context("device", uid, 0))
        let epochKey = try KeyWrap.wrap(identity.epochKey, with: key, context: context("epoch", uid, identity.epoch))
        var w = ByteWriter()
        w.raw(magic)
        w.u32(identity.epoch)
        w.raw(seed)
        w.raw(epochKey)
        return w.bytes
    }

    static func decode(_ bytes: [UInt8], uid: UInt32, key: SecretBytes) throws -> SyncIdentity {
        guard bytes.count == fileLength, Array(bytes[0..<4]) == magic else {
            throw SyncError.malformed("not a sync identity file")
        }
        var r = ByteReader(Array(bytes[4..<8]))
        let epoch = try r.u32("epoch")
        let wrapped = Array(bytes[8...])
        let seed = try KeyWrap.unwrap(
            Array(wrapped[0..<KeyWrap.wrappedLength]), with: key, context: context("device", uid, 0))
        let epochKey = try KeyWrap.unwrap(
            Array(wrapped[KeyWrap.wrappedLength...]), with: key, context: context("epoch", uid, epoch))
        return SyncIdentity(signer: try SigningKey(seed: seed), epoch: epoch, epochKey: epochKey)
    }

    private static func context(_ role: String, _ uid: UInt32, _ epoch: UInt32) -> [UInt8] {
        var w = ByteWriter()
        w.raw(Array("arca.sync-identity.v1/\(role)".utf8))
        w.u32(uid)
        w.u32(epoch)
        return w.bytes
    }
}
