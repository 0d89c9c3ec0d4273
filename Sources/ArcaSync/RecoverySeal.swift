import ArcaCrypto

/// The circle's epoch keys sealed to the vault's printed recovery key (issue 17: never only
/// to the login password). The recovery key deterministically yields an Ed25519 identity; its
/// public half is all a device needs to seal to it (so arcad never holds the recovery key),
/// and only the recovery key opens the seal. The layout is an approval's (see `Enrollment`)
/// under magic "ARK1" and signature domain "arca-sync-recovery-seal-v1", naming the recovery
/// identity, which is never a member: a recovery seal cannot pass for an approval, nor the
/// reverse.
public enum RecoverySeal {
    static let magic: [UInt8] = Array("ARK1".utf8)
    static let signatureDomain: [UInt8] = Array("arca-sync-recovery-seal-v1".utf8)
    static let label = "arca.sync-recovery-identity.v1"

    /// Whether `bytes` starts as a recovery seal does (its magic): how `arca sync recover`
    /// tells the seals among a folder's approvals, before arcad opens them.
    public static func isSeal(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// The identity derived from the 32-byte recovery key.
    public static func identity(recoveryKey: SecretBytes) throws -> SigningKey {
        try SigningKey(seed: SubkeyDerivation.derive(from: recoveryKey, label: label))
    }

    /// The public key to keep for sealing (`identity(recoveryKey:).publicKey`): not a secret.
    public static func publicKey(recoveryKey: SecretBytes) throws -> [UInt8] {
        try identity(recoveryKey: recoveryKey).publicKey
    }

    /// Every epoch key of `circle`, sealed to the recovery identity `recoveryPublicKey` and
    /// signed by the member `signer` (after `sync init` and after every rotation).
    public static func seal(_ circle: Circle, to recoveryPublicKey: [UInt8], signer: SigningKey) throws -> [UInt8] {
        try Enrollment.sign(magic, signatureDomain, naming: DeviceID(recoveryPublicKey), circle: circle, signer: signer)
    }

    /// With the recovery key: checks `bytes` is signed by `author`, a member of the circle it
    /// names, and opens the circle with every epoch key. Wrong key or altered bytes throw.
    public static func open(_ bytes: [UInt8], from author: DeviceID, recoveryKey: SecretBytes) throws -> Circle {
        try Enrollment.open(bytes, from: author, as: identity(recoveryKey: recoveryKey), recovery: true)
    }
}
