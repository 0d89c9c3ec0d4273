/// A message sealed with XChaCha20-Poly1305: a 24-byte nonce and the ciphertext
/// with its 16-byte tag. `combined` is the layout stored on disk: nonce ‖ ciphertext ‖ tag.
public struct SealedBox: Sendable, Equatable {
    /// The 24-byte nonce.
    public let nonce: [UInt8]
    /// Ciphertext followed by the 16-byte Poly1305 tag.
    public let ciphertext: [UInt8]

    /// nonce ‖ ciphertext ‖ tag.
    public var combined: [UInt8] { nonce + ciphertext }

    /// Builds a box from its parts, checking their lengths.
    public init(nonce: [UInt8], ciphertext: [UInt8]) throws {
        guard nonce.count == AEAD.nonceLength else {
            throw CryptoError.invalidLength(what: "nonce", expected: AEAD.nonceLength, actual: nonce.count)
        }
        guard ciphertext.count >= AEAD.tagLength else {
            throw CryptoError.invalidLength(what: "sealed box", expected: AEAD.tagLength, actual: ciphertext.count)
        }
        self.nonce = nonce
        self.ciphertext = ciphertext
    }

    /// Splits nonce ‖ ciphertext ‖ tag; throws if it is too short to be a box.
    public init(combined: [UInt8]) throws {
        guard combined.count >= AEAD.nonceLength + AEAD.tagLength else {
            throw CryptoError.invalidLength(
                what: "sealed box", expected: AEAD.nonceLength + AEAD.tagLength, actual: combined.count)
        }
        try self.init(
            nonce: Array(combined[..<AEAD.nonceLength]), ciphertext: Array(combined[AEAD.nonceLength...]))
    }
}

/// XChaCha20-Poly1305 (IETF construction) with associated data. The 192-bit nonce
/// is random per message, so nonces never repeat in practice under one key.
public enum AEAD {
    /// 32.
    public static let keyLength = Sodium.aeadKeyLength
    /// 24.
    public static let nonceLength = Sodium.aeadNonceLength
    /// 16.
    public static let tagLength = Sodium.aeadTagLength

    /// Seals `message` under `key`, binding `associatedData` (authenticated, not encrypted).
    /// `nonce` is random unless given (known-answer tests only).
    public static func seal(
        _ message: UnsafeRawBufferPointer, key: SecretBytes, associatedData: [UInt8] = [], nonce: [UInt8]? = nil
    ) throws -> SealedBox {
        try Sodium.ensureReady()
        try checkKey(key)
        let nonce = nonce ?? SecureRandom.bytes(count: nonceLength)
        guard nonce.count == nonceLength else {
            throw CryptoError.invalidLength(what: "nonce", expected: nonceLength, actual: nonce.count)
        }
        var output = [UInt8](repeating: 0, count: message.count + tagLength)
        let ok = output.withUnsafeMutableBytes { out in
            associatedData.withUnsafeBytes { ad in
                nonce.withUnsafeBytes { n in
                    key.withUnsafeBytes { k in
                        Sodium.aeadSeal(output: out, message: message, associatedData: ad, nonce: n, key: k)
                    }
                }
            }
        }
        guard ok else { throw CryptoError.authenticationFailed }
        return try SealedBox(nonce: nonce, ciphertext: output)
    }

    /// Seals a secret.
    public static func seal(
        _ message: SecretBytes, key: SecretBytes, associatedData: [UInt8] = [], nonce: [UInt8]? = nil
    ) throws -> SealedBox {
        try message.withUnsafeBytes { try seal($0, key: key, associatedData: associatedData, nonce: nonce) }
    }

    /// Seals non-secret bytes (for example an item's encoded attributes).
    public static func seal(
        _ message: [UInt8], key: SecretBytes, associatedData: [UInt8] = [], nonce: [UInt8]? = nil
    ) throws -> SealedBox {
        try message.withUnsafeBytes { try seal($0, key: key, associatedData: associatedData, nonce: nonce) }
    }

    /// Verifies and opens `box` into secure storage. Any change to the box, the key or
    /// the associated data throws `CryptoError.authenticationFailed`.
    public static func open(_ box: SealedBox, key: SecretBytes, associatedData: [UInt8] = []) throws -> SecretBytes {
        try Sodium.ensureReady()
        try checkKey(key)
        return try SecretBytes(count: box.ciphertext.count - tagLength) { out in
            try openInto(out, box: box, key: key, associatedData: associatedData)
        }
    }

    /// Verifies and opens `box` into `output`, an existing secret of exactly the
    /// plaintext's length, so that a hot loop (a vault scanning items) reuses one
    /// guarded allocation instead of making one per message. On failure `output` is wiped.
    public static func open(
        _ box: SealedBox, key: SecretBytes, associatedData: [UInt8] = [], into output: SecretBytes
    ) throws {
        try Sodium.ensureReady()
        try checkKey(key)
        let length = box.ciphertext.count - tagLength
        guard output.count == length else {
            throw CryptoError.invalidLength(what: "AEAD output", expected: length, actual: output.count)
        }
        do {
            try output.withUnsafeMutableBytes { try openInto($0, box: box, key: key, associatedData: associatedData) }
        } catch {
            output.wipe()
            throw error
        }
    }

    /// Verifies and opens `box` into an ordinary array, for data that is confidential
    /// on disk but not a secret in memory (attributes). Secrets use `open`.
    public static func openBytes(_ box: SealedBox, key: SecretBytes, associatedData: [UInt8] = []) throws -> [UInt8] {
        try Sodium.ensureReady()
        try checkKey(key)
        var output = [UInt8](repeating: 0, count: box.ciphertext.count - tagLength)
        try output.withUnsafeMutableBytes { try openInto($0, box: box, key: key, associatedData: associatedData) }
        return output
    }

    private static func openInto(
        _ out: UnsafeMutableRawBufferPointer, box: SealedBox, key: SecretBytes, associatedData: [UInt8]
    ) throws {
        let ok = box.ciphertext.withUnsafeBytes { c in
            associatedData.withUnsafeBytes { ad in
                box.nonce.withUnsafeBytes { n in
                    key.withUnsafeBytes { k in
                        Sodium.aeadOpen(output: out, ciphertext: c, associatedData: ad, nonce: n, key: k)
                    }
                }
            }
        }
        guard ok else { throw CryptoError.authenticationFailed }
    }

    private static func checkKey(_ key: SecretBytes) throws {
        guard key.count == keyLength else {
            throw CryptoError.invalidLength(what: "AEAD key", expected: keyLength, actual: key.count)
        }
    }
}
