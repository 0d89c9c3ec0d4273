import ArcaSystem
import CSodium

/// Thin wrappers over the libsodium calls that ArcaCrypto uses. This is the only
/// file of the module that touches libsodium's C API; everything else sees Swift
/// buffers. Each wrapper names the C function it calls.
enum Sodium {
    /// libsodium must be initialised once before use; `sodium_init` is thread-safe
    /// and idempotent, and Swift runs a static `let` initialiser exactly once.
    static let ready: Bool = sodium_init() >= 0

    static func ensureReady() throws {
        guard ready else { throw CryptoError.libraryUnavailable }
    }

    /// Guarded, mlocked allocation. The corresponding C function is `sodium_malloc`.
    static func secureAllocate(_ count: Int) -> UnsafeMutableRawPointer? {
        _ = ready
        return sodium_malloc(max(count, 1))
    }

    /// Zeroes and frees a `secureAllocate` block. The corresponding C function is `sodium_free`.
    static func secureFree(_ pointer: UnsafeMutableRawPointer) {
        sodium_free(pointer)
    }

    /// Zeroes memory in a way the compiler cannot elide: ArcaSystem's one zeroing
    /// primitive (`explicit_bzero`), the same as every other wipe in Arca.
    static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        SecureZero.zero(buffer)
    }

    /// Constant-time comparison of equal-length buffers. The corresponding C function is `sodium_memcmp`.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return true }
        return sodium_memcmp(pa, pb, a.count) == 0
    }

    /// Fills a buffer from the kernel CSPRNG. The corresponding C function is `randombytes_buf`.
    static func randomFill(_ buffer: UnsafeMutableRawBufferPointer) {
        _ = ready
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    // MARK: Argon2id

    static let argon2idOpsLimitMin = UInt64(crypto_pwhash_argon2id_opslimit_min())
    static let argon2idMemLimitMin = Int(crypto_pwhash_argon2id_memlimit_min())
    static let argon2idMemLimitMax = Int(truncatingIfNeeded: crypto_pwhash_argon2id_memlimit_max())
    static let argon2idSaltLength = Int(crypto_pwhash_argon2id_saltbytes())

    /// Argon2id v1.3, parallelism 1. The corresponding C function is `crypto_pwhash`.
    static func argon2id(
        output: UnsafeMutableRawBufferPointer, password: UnsafeRawBufferPointer,
        salt: UnsafeRawBufferPointer, opsLimit: UInt64, memLimit: Int
    ) -> Bool {
        // crypto_pwhash reads exactly crypto_pwhash_SALTBYTES from `salt`.
        guard salt.count == argon2idSaltLength, let out = output.baseAddress, let s = salt.baseAddress else {
            return false
        }
        let pw = password.baseAddress?.assumingMemoryBound(to: CChar.self)
        let placeholderChar = UnsafeRawPointer(nonNull(password)).assumingMemoryBound(to: CChar.self)
        return crypto_pwhash(
            out.assumingMemoryBound(to: UInt8.self), UInt64(output.count),
            pw ?? placeholderChar, UInt64(password.count),
            s.assumingMemoryBound(to: UInt8.self), opsLimit, memLimit,
            crypto_pwhash_ALG_ARGON2ID13) == 0
    }

    // MARK: XChaCha20-Poly1305

    static let aeadKeyLength = Int(crypto_aead_xchacha20poly1305_ietf_keybytes())
    static let aeadNonceLength = Int(crypto_aead_xchacha20poly1305_ietf_npubbytes())
    static let aeadTagLength = Int(crypto_aead_xchacha20poly1305_ietf_abytes())

    /// Encrypts `message` into `output` (message length + tag). The corresponding C
    /// function is `crypto_aead_xchacha20poly1305_ietf_encrypt`.
    static func aeadSeal(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) -> Bool {
        var written: UInt64 = 0
        return crypto_aead_xchacha20poly1305_ietf_encrypt(
            nonNull(output), &written, nonNull(message), UInt64(message.count),
            nonNull(associatedData), UInt64(associatedData.count), nil, nonNull(nonce), nonNull(key)) == 0
            && Int(written) == output.count
    }

    /// Verifies and decrypts `ciphertext` (with tag) into `output`. The corresponding C
    /// function is `crypto_aead_xchacha20poly1305_ietf_decrypt`.
    static func aeadOpen(
        output: UnsafeMutableRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) -> Bool {
        var written: UInt64 = 0
        return crypto_aead_xchacha20poly1305_ietf_decrypt(
            nonNull(output), &written, nil, nonNull(ciphertext), UInt64(ciphertext.count),
            nonNull(associatedData), UInt64(associatedData.count), nonNull(nonce), nonNull(key)) == 0
            && Int(written) == output.count
    }

    // MARK: Hashes

    /// BLAKE2b, optionally keyed. The corresponding C function is `crypto_generichash`.
    static func blake2b(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) -> Bool {
        crypto_generichash(
            nonNull(output), output.count, nonNull(message), UInt64(message.count), nonNull(key), key.count) == 0
    }

    /// HMAC-SHA-256 with a key of any length. The corresponding C functions are
    /// `crypto_auth_hmacsha256_init`, `_update` and `_final`.
    static func hmacSHA256(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) {
        var state = crypto_auth_hmacsha256_state()
        crypto_auth_hmacsha256_init(&state, nonNull(key), key.count)
        crypto_auth_hmacsha256_update(&state, nonNull(message), UInt64(message.count))
        crypto_auth_hmacsha256_final(&state, nonNull(output))
        withUnsafeMutableBytes(of: &state) { zero($0) }
    }

    /// HMAC-SHA-512 with a key of any length. The corresponding C functions are
    /// `crypto_auth_hmacsha512_init`, `_update` and `_final`.
    static func hmacSHA512(
        output: UnsafeMutableRawBufferPointer, message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer
    ) {
        var state = crypto_auth_hmacsha512_state()
        crypto_auth_hmacsha512_init(&state, nonNull(key), key.count)
        crypto_auth_hmacsha512_update(&state, nonNull(message), UInt64(message.count))
        crypto_auth_hmacsha512_final(&state, nonNull(output))
        withUnsafeMutableBytes(of: &state) { zero($0) }
    }

    /// libsodium's HMAC API takes non-null pointers even for empty input; an empty
    /// buffer borrows this one byte, which is never read (length 0) or written.
    // nonisolated(unsafe): a raw pointer is not Sendable; this one is never written through.
    nonisolated(unsafe) private static let placeholder = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

    private static func nonNull(_ b: UnsafeRawBufferPointer) -> UnsafePointer<UInt8> {
        u8c(b) ?? UnsafePointer(placeholder)
    }

    private static func nonNull(_ b: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8> {
        u8(b) ?? placeholder
    }

    private static func u8(_ b: UnsafeMutableRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
        b.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }

    private static func u8c(_ b: UnsafeRawBufferPointer) -> UnsafePointer<UInt8>? {
        b.baseAddress?.assumingMemoryBound(to: UInt8.self)
    }
}
