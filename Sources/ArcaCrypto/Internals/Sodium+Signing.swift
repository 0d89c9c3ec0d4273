import CSodium

/// Thin wrappers over libsodium's public-key calls (Ed25519 signatures, sealed boxes to
/// an X25519 key derived from an Ed25519 key). Like `Sodium.swift`, the only kind of file
/// that touches libsodium's C API; each wrapper names the C function it calls.
extension Sodium {
    static let signPublicKeyLength = Int(crypto_sign_ed25519_publickeybytes())
    static let signSecretKeyLength = Int(crypto_sign_ed25519_secretkeybytes())
    static let signSeedLength = Int(crypto_sign_ed25519_seedbytes())
    static let signatureLength = Int(crypto_sign_ed25519_bytes())
    static let boxPublicKeyLength = Int(crypto_box_publickeybytes())
    static let boxSecretKeyLength = Int(crypto_box_secretkeybytes())
    static let sealOverhead = Int(crypto_box_sealbytes())

    /// Ed25519 key pair from a 32-byte seed. The corresponding C function is `crypto_sign_ed25519_seed_keypair`.
    static func signKeyPair(
        publicKey: UnsafeMutableRawBufferPointer, secretKey: UnsafeMutableRawBufferPointer, seed: UnsafeRawBufferPointer
    ) -> Bool {
        guard publicKey.count == signPublicKeyLength, secretKey.count == signSecretKeyLength,
            seed.count == signSeedLength, let pk = publicKey.baseAddress, let sk = secretKey.baseAddress,
            let s = seed.baseAddress
        else { return false }
        return crypto_sign_ed25519_seed_keypair(
            pk.assumingMemoryBound(to: UInt8.self), sk.assumingMemoryBound(to: UInt8.self),
            s.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// Detached Ed25519 signature. The corresponding C function is `crypto_sign_ed25519_detached`.
    static func sign(
        signature: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, secretKey: UnsafeRawBufferPointer
    ) -> Bool {
        guard signature.count == signatureLength, secretKey.count == signSecretKeyLength,
            let sig = signature.baseAddress, let sk = secretKey.baseAddress
        else { return false }
        var length: UInt64 = 0
        return withNonNull(message) { m in
            crypto_sign_ed25519_detached(
                sig.assumingMemoryBound(to: UInt8.self), &length, m, UInt64(message.count),
                sk.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Verifies a detached Ed25519 signature. The corresponding C function is
    /// `crypto_sign_ed25519_verify_detached`.
    static func verify(
        signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer
    ) -> Bool {
        guard signature.count == signatureLength, publicKey.count == signPublicKeyLength,
            let sig = signature.baseAddress, let pk = publicKey.baseAddress
        else { return false }
        return withNonNull(message) { m in
            crypto_sign_ed25519_verify_detached(
                sig.assumingMemoryBound(to: UInt8.self), m, UInt64(message.count),
                pk.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// X25519 public key of an Ed25519 public key. The corresponding C function is
    /// `crypto_sign_ed25519_pk_to_curve25519`.
    static func boxPublicKey(output: UnsafeMutableRawBufferPointer, signPublicKey: UnsafeRawBufferPointer) -> Bool {
        guard output.count == boxPublicKeyLength, signPublicKey.count == signPublicKeyLength,
            let o = output.baseAddress, let p = signPublicKey.baseAddress
        else { return false }
        return crypto_sign_ed25519_pk_to_curve25519(
            o.assumingMemoryBound(to: UInt8.self), p.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// X25519 secret key of an Ed25519 secret key. The corresponding C function is
    /// `crypto_sign_ed25519_sk_to_curve25519`.
    static func boxSecretKey(output: UnsafeMutableRawBufferPointer, signSecretKey: UnsafeRawBufferPointer) -> Bool {
        guard output.count == boxSecretKeyLength, signSecretKey.count == signSecretKeyLength,
            let o = output.baseAddress, let s = signSecretKey.baseAddress
        else { return false }
        return crypto_sign_ed25519_sk_to_curve25519(
            o.assumingMemoryBound(to: UInt8.self), s.assumingMemoryBound(to: UInt8.self)) == 0
    }

    /// Anonymous sealed box to an X25519 public key. The corresponding C function is `crypto_box_seal`.
    static func seal(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, publicKey: UnsafeRawBufferPointer
    ) -> Bool {
        guard output.count == message.count + sealOverhead, publicKey.count == boxPublicKeyLength,
            let o = output.baseAddress, let p = publicKey.baseAddress
        else { return false }
        return withNonNull(message) { m in
            crypto_box_seal(
                o.assumingMemoryBound(to: UInt8.self), m, UInt64(message.count),
                p.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Opens an anonymous sealed box. The corresponding C function is `crypto_box_seal_open`.
    static func sealOpen(
        output: UnsafeMutableRawBufferPointer, box: UnsafeRawBufferPointer,
        publicKey: UnsafeRawBufferPointer, secretKey: UnsafeRawBufferPointer
    ) -> Bool {
        guard box.count >= sealOverhead, output.count == box.count - sealOverhead,
            publicKey.count == boxPublicKeyLength, secretKey.count == boxSecretKeyLength,
            let b = box.baseAddress, let p = publicKey.baseAddress, let s = secretKey.baseAddress
        else { return false }
        var spare: UInt8 = 0
        let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return withUnsafeMutablePointer(to: &spare) { fallback in
            crypto_box_seal_open(
                out ?? fallback, b.assumingMemoryBound(to: UInt8.self), UInt64(box.count),
                p.assumingMemoryBound(to: UInt8.self), s.assumingMemoryBound(to: UInt8.self)) == 0
        }
    }

    /// Calls `body` with a non-null pointer even for an empty buffer (libsodium reads none of it then).
    private static func withNonNull<R>(_ b: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        if let base = b.baseAddress { return body(base.assumingMemoryBound(to: UInt8.self)) }
        var spare: UInt8 = 0
        return withUnsafePointer(to: &spare) { body($0) }
    }
}
