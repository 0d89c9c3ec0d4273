import ArcaCrypto
import CSodium

/// The libsodium calls the fleet needs beyond ArcaCrypto: Ed25519 signatures and
/// X25519 sealed boxes. The only file of the module that touches libsodium's C API.
enum FleetSodium {
    static let ready: Bool = sodium_init() >= 0

    static let signPublicKeyLength = Int(crypto_sign_publickeybytes())
    static let signSeedLength = Int(crypto_sign_seedbytes())
    static let signatureLength = Int(crypto_sign_bytes())
    static let boxPublicKeyLength = Int(crypto_box_publickeybytes())
    static let boxSecretKeyLength = Int(crypto_box_secretkeybytes())
    static let sealOverhead = Int(crypto_box_sealbytes())

    /// The Ed25519 public key of a 32-byte seed. The corresponding C function is `crypto_sign_seed_keypair`.
    static func signPublicKey(seed: SecretBytes) throws -> [UInt8] {
        guard ready, seed.count == signSeedLength else { throw FleetError.crypto("bad signing seed") }
        var publicKey = [UInt8](repeating: 0, count: signPublicKeyLength)
        let secretKey = try SecretBytes(count: Int(crypto_sign_secretkeybytes()))
        let status = seed.withUnsafeBytes { s in
            secretKey.withUnsafeMutableBytes { sk -> Int32 in
                guard let skp = sk.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let sp = s.baseAddress?.assumingMemoryBound(to: UInt8.self)
                else { return -1 }
                return crypto_sign_seed_keypair(&publicKey, skp, sp)
            }
        }
        guard status == 0 else { throw FleetError.crypto("crypto_sign_seed_keypair failed") }
        return publicKey
    }

    /// A detached Ed25519 signature. The corresponding C function is `crypto_sign_detached`.
    static func sign(_ message: [UInt8], seed: SecretBytes) throws -> [UInt8] {
        guard ready, seed.count == signSeedLength else { throw FleetError.crypto("bad signing seed") }
        var publicKey = [UInt8](repeating: 0, count: signPublicKeyLength)
        let secretKey = try SecretBytes(count: Int(crypto_sign_secretkeybytes()))
        var signature = [UInt8](repeating: 0, count: signatureLength)
        let status = seed.withUnsafeBytes { s in
            secretKey.withUnsafeMutableBytes { sk -> Int32 in
                guard let skp = sk.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let sp = s.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    crypto_sign_seed_keypair(&publicKey, skp, sp) == 0
                else { return -1 }
                return crypto_sign_detached(&signature, nil, message, UInt64(message.count), skp)
            }
        }
        guard status == 0 else { throw FleetError.crypto("crypto_sign_detached failed") }
        return signature
    }

    /// Whether `signature` is `publicKey`'s over `message`. The corresponding C function is
    /// `crypto_sign_verify_detached`.
    static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard ready, signature.count == signatureLength, publicKey.count == signPublicKeyLength else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// The X25519 public key of a secret key. The corresponding C function is `crypto_scalarmult_base`.
    static func boxPublicKey(secret: SecretBytes) throws -> [UInt8] {
        guard ready, secret.count == boxSecretKeyLength else { throw FleetError.crypto("bad box key") }
        var publicKey = [UInt8](repeating: 0, count: boxPublicKeyLength)
        let status = secret.withUnsafeBytes { s -> Int32 in
            guard let sp = s.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
            return crypto_scalarmult_base(&publicKey, sp)
        }
        guard status == 0 else { throw FleetError.crypto("crypto_scalarmult_base failed") }
        return publicKey
    }

    /// Seals `message` to `publicKey` (anonymous sender). The corresponding C function is `crypto_box_seal`.
    static func seal(_ message: SecretBytes, to publicKey: [UInt8]) throws -> [UInt8] {
        guard ready, publicKey.count == boxPublicKeyLength else { throw FleetError.crypto("bad box public key") }
        var output = [UInt8](repeating: 0, count: message.count + sealOverhead)
        let status = message.withUnsafeBytes { m in
            crypto_box_seal(
                &output, m.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(m.count), publicKey)
        }
        guard status == 0 else { throw FleetError.crypto("crypto_box_seal failed") }
        return output
    }

    /// Opens a sealed box with the recipient's key pair. The corresponding C function is `crypto_box_seal_open`.
    static func sealOpen(_ box: [UInt8], publicKey: [UInt8], secret: SecretBytes) throws -> SecretBytes {
        guard ready, box.count > sealOverhead, publicKey.count == boxPublicKeyLength,
            secret.count == boxSecretKeyLength
        else { throw FleetError.verification("sealed key malformed") }
        let opened = try SecretBytes(count: box.count - sealOverhead)
        let status = secret.withUnsafeBytes { sk in
            opened.withUnsafeMutableBytes { out -> Int32 in
                guard let skp = sk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
                guard let outp = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return -1 }
                return crypto_box_seal_open(outp, box, UInt64(box.count), publicKey, skp)
            }
        }
        guard status == 0 else { throw FleetError.verification("sealed key does not open with this host's key") }
        return opened
    }
}
