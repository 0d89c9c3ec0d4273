/// Keyed hashes: BLAKE2b for sub-keys and blind indexes, HMAC-SHA-2 for
/// interoperability and known-answer tests.
public enum KeyedHash {
    /// BLAKE2b of `message` with an optional key (≤ 64 bytes) and an output of 16…64 bytes.
    public static func blake2b(_ message: [UInt8], key: SecretBytes? = nil, outputLength: Int = 32) throws -> [UInt8] {
        try Sodium.ensureReady()
        guard (16...64).contains(outputLength) else {
            throw CryptoError.invalidLength(what: "BLAKE2b output", expected: 32, actual: outputLength)
        }
        if let key, !(16...64).contains(key.count) {
            throw CryptoError.invalidLength(what: "BLAKE2b key", expected: 32, actual: key.count)
        }
        var out = [UInt8](repeating: 0, count: outputLength)
        let ok = out.withUnsafeMutableBytes { o in
            message.withUnsafeBytes { m in
                if let key {
                    return key.withUnsafeBytes { Sodium.blake2b(output: o, message: m, key: $0) }
                }
                return Sodium.blake2b(output: o, message: m, key: UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        guard ok else { throw CryptoError.invalidParameters("BLAKE2b failed") }
        return out
    }

    /// HMAC-SHA-256 (32 bytes).
    public static func hmacSHA256(_ message: [UInt8], key: SecretBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { o in
            message.withUnsafeBytes { m in key.withUnsafeBytes { Sodium.hmacSHA256(output: o, message: m, key: $0) } }
        }
        return out
    }

    /// HMAC-SHA-512 (64 bytes).
    public static func hmacSHA512(_ message: [UInt8], key: SecretBytes) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        out.withUnsafeMutableBytes { o in
            message.withUnsafeBytes { m in key.withUnsafeBytes { Sodium.hmacSHA512(output: o, message: m, key: $0) } }
        }
        return out
    }
}

/// Sub-key derivation: independent keys for independent purposes from one master
/// key, as keyed BLAKE2b over a purpose label and optional extra input (for the
/// ThisDeviceOnly classes, the host secret). Different labels give unrelated keys.
public enum SubkeyDerivation {
    /// Derives a 32-byte key for `label` (e.g. "arca.class.v1/whenUnlocked"),
    /// mixing in `extra` (e.g. a host secret) when given.
    public static func derive(from master: SecretBytes, label: String, extra: SecretBytes? = nil) throws -> SecretBytes
    {
        var input = Array("arca-kdf\u{0}".utf8) + Array(label.utf8) + [0]
        if let extra {
            input += withUnsafeBytes(of: UInt32(extra.count).littleEndian) { Array($0) }
            extra.withUnsafeBytes { input += $0 }
        }
        defer { input.withUnsafeMutableBytes { Sodium.zero($0) } }
        var out = try KeyedHash.blake2b(input, key: master, outputLength: 32)
        return try SecretBytes(consuming: &out)
    }
}

/// A blind index: a keyed hash of a canonical value (a primary key), so that
/// equality can be looked up without storing the value in the clear.
public struct BlindIndex: Sendable {
    private let key: SecretBytes

    /// An index keyed by `key` (a 32-byte sub-key, never the master key).
    public init(key: SecretBytes) { self.key = key }

    /// The 32-byte tag of `value`.
    public func tag(_ value: [UInt8]) throws -> [UInt8] {
        try KeyedHash.blake2b(value, key: key, outputLength: 32)
    }
}

/// Random bytes from the kernel's CSPRNG, for nonces, salts and ids.
public enum SecureRandom {
    /// `count` random bytes (not secret storage: use `SecretBytes.random` for keys).
    public static func bytes(count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { Sodium.randomFill($0) }
        return out
    }
}
