/// Wrapping one key with another: AEAD-seal the key under a key-encryption key,
/// binding a context (what the key is for, which vault) as associated data, so a
/// wrapped key cannot be unwrapped in another role.
public enum KeyWrap {
    /// Length of a wrapped 32-byte key: nonce + key + tag.
    public static let wrappedLength = AEAD.nonceLength + 32 + AEAD.tagLength

    /// Wraps `key` under `wrappingKey`; returns nonce ‖ ciphertext ‖ tag.
    public static func wrap(_ key: SecretBytes, with wrappingKey: SecretBytes, context: [UInt8]) throws -> [UInt8] {
        try AEAD.seal(key, key: wrappingKey, associatedData: context).combined
    }

    /// Unwraps a key sealed by `wrap`. Wrong wrapping key, wrong context or altered
    /// bytes → `CryptoError.authenticationFailed`.
    public static func unwrap(_ wrapped: [UInt8], with wrappingKey: SecretBytes, context: [UInt8]) throws -> SecretBytes
    {
        try AEAD.open(SealedBox(combined: wrapped), key: wrappingKey, associatedData: context)
    }

    /// Unwraps a key into `output` (32 bytes), reusing its guarded storage.
    public static func unwrap(
        _ wrapped: [UInt8], with wrappingKey: SecretBytes, context: [UInt8], into output: SecretBytes
    ) throws {
        try AEAD.open(SealedBox(combined: wrapped), key: wrappingKey, associatedData: context, into: output)
    }
}
