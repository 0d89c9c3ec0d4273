/// An Ed25519 signing key (libsodium). The 64-byte secret key lives in `SecretBytes`;
/// the 32-byte public key is also the device's identity in a sync circle, and its X25519
/// twin (libsodium's birational map) receives keys sealed with `SealedKeyBox`.
public struct SigningKey: Sendable {
    /// 32.
    public static let seedLength = 32
    /// 64.
    public static let signatureLength = 64
    /// The libsodium secret key (seed ‖ public key).
    public let secretKey: SecretBytes
    /// The 32-byte public key.
    public let publicKey: [UInt8]

    /// A new random key pair.
    public static func generate() throws -> SigningKey {
        try SigningKey(seed: SecretBytes.random(count: seedLength))
    }

    /// The key pair of a 32-byte seed (deterministic: known-answer tests, restoring a stored key).
    public init(seed: SecretBytes) throws {
        try Sodium.ensureReady()
        guard seed.count == Self.seedLength else {
            throw CryptoError.invalidLength(what: "Ed25519 seed", expected: Self.seedLength, actual: seed.count)
        }
        var pk = [UInt8](repeating: 0, count: Sodium.signPublicKeyLength)
        let sk = try SecretBytes(count: Sodium.signSecretKeyLength) { out in
            let ok = pk.withUnsafeMutableBytes { p in
                seed.withUnsafeBytes { Sodium.signKeyPair(publicKey: p, secretKey: out, seed: $0) }
            }
            guard ok else { throw CryptoError.invalidParameters("Ed25519 key generation failed") }
        }
        secretKey = sk
        publicKey = pk
    }

    /// The seed this key pair was made from (the first 32 bytes of the secret key), for storing it.
    public func seed() throws -> SecretBytes { try secretKey.slice(0..<Self.seedLength) }

    /// A detached signature over `message`.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        var sig = [UInt8](repeating: 0, count: Self.signatureLength)
        let ok = sig.withUnsafeMutableBytes { s in
            message.withUnsafeBytes { m in
                secretKey.withUnsafeBytes { Sodium.sign(signature: s, message: m, secretKey: $0) }
            }
        }
        guard ok else { throw CryptoError.invalidParameters("Ed25519 signing failed") }
        return sig
    }

    /// Whether `signature` is `publicKey`'s signature over `message`. Never throws: a
    /// malformed key or signature simply does not verify.
    public static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard Sodium.ready else { return false }
        return signature.withUnsafeBytes { s in
            message.withUnsafeBytes { m in
                publicKey.withUnsafeBytes { Sodium.verify(signature: s, message: m, publicKey: $0) }
            }
        }
    }
}

/// Anonymous public-key sealing (libsodium's `crypto_box_seal`) of a key to the holder of
/// an Ed25519 key pair, through the pair's X25519 twin: how a circle's epoch key reaches
/// each enrolled device. Only the holder of the signing key's secret can open it.
public enum SealedKeyBox {
    /// 48: ephemeral public key + tag.
    public static let overhead = Sodium.sealOverhead

    /// Seals `secret` to the device whose Ed25519 public key is `recipient`.
    public static func seal(_ secret: SecretBytes, to recipient: [UInt8]) throws -> [UInt8] {
        try Sodium.ensureReady()
        var boxKey = [UInt8](repeating: 0, count: Sodium.boxPublicKeyLength)
        let converted = boxKey.withUnsafeMutableBytes { o in
            recipient.withUnsafeBytes { Sodium.boxPublicKey(output: o, signPublicKey: $0) }
        }
        guard converted else { throw CryptoError.invalidParameters("not an Ed25519 public key") }
        var out = [UInt8](repeating: 0, count: secret.count + overhead)
        let ok = out.withUnsafeMutableBytes { o in
            secret.withUnsafeBytes { m in boxKey.withUnsafeBytes { Sodium.seal(output: o, message: m, publicKey: $0) } }
        }
        guard ok else { throw CryptoError.invalidParameters("sealing failed") }
        return out
    }

    /// Opens a box sealed to `key`. Wrong recipient or altered bytes → `CryptoError.authenticationFailed`.
    public static func open(_ box: [UInt8], with key: SigningKey) throws -> SecretBytes {
        try Sodium.ensureReady()
        guard box.count >= overhead else {
            throw CryptoError.invalidLength(what: "sealed key box", expected: overhead, actual: box.count)
        }
        var boxPublic = [UInt8](repeating: 0, count: Sodium.boxPublicKeyLength)
        guard
            boxPublic.withUnsafeMutableBytes({ o in
                key.publicKey.withUnsafeBytes { Sodium.boxPublicKey(output: o, signPublicKey: $0) }
            })
        else { throw CryptoError.invalidParameters("not an Ed25519 public key") }
        let boxSecret = try SecretBytes(count: Sodium.boxSecretKeyLength) { o in
            guard key.secretKey.withUnsafeBytes({ Sodium.boxSecretKey(output: o, signSecretKey: $0) }) else {
                throw CryptoError.invalidParameters("not an Ed25519 secret key")
            }
        }
        return try SecretBytes(count: box.count - overhead) { out in
            let ok = box.withUnsafeBytes { b in
                boxPublic.withUnsafeBytes { p in
                    boxSecret.withUnsafeBytes { Sodium.sealOpen(output: out, box: b, publicKey: p, secretKey: $0) }
                }
            }
            guard ok else { throw CryptoError.authenticationFailed }
        }
    }
}
