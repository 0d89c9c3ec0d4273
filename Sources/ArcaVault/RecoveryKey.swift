import ArcaCrypto

/// A 256-bit recovery key, shown once at enrollment, that opens the vault when the
/// password is lost. Its printable form is Crockford base32 of key ‖ checksum
/// (the first 4 bytes of BLAKE2b(key)), in dash-separated groups of four, e.g.
/// `7Q2M-…`; a mistyped character fails the checksum instead of unlocking nothing.
public final class RecoveryKey: Sendable {
    /// The raw 32-byte key.
    public let key: SecretBytes

    /// Length of the raw key.
    public static let length = 32
    private static let checksumLength = 4
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A fresh random key.
    public static func generate() throws -> RecoveryKey {
        try RecoveryKey(key: SecretBytes.random(count: length))
    }

    /// Wraps an existing 32-byte key.
    public init(key: SecretBytes) throws {
        guard key.count == Self.length else {
            throw VaultError.param("a recovery key is \(Self.length) bytes, got \(key.count)")
        }
        self.key = key
    }

    /// Parses the printable form (case, dashes and spaces ignored; O reads as 0,
    /// I and L as 1). A wrong character or length → `VaultError.param`.
    public convenience init(parsing text: SecretBytes) throws {
        var bits: UInt32 = 0
        var bitCount = 0
        var bytes: [UInt8] = []
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        try text.withUnsafeBytes { raw in
            for c in raw {
                let upper = (c >= 97 && c <= 122) ? c - 32 : c
                if upper == 45 || upper == 32 { continue }  // '-' and ' '
                let mapped: UInt8 = upper == 79 ? 48 : (upper == 73 || upper == 76) ? 49 : upper  // O→0, I/L→1
                guard let value = Self.alphabet.firstIndex(of: mapped) else {
                    throw VaultError.param("a recovery key contains a character outside its alphabet")
                }
                bits = (bits << 5) | UInt32(value)
                bitCount += 5
                if bitCount >= 8 {
                    bitCount -= 8
                    bytes.append(UInt8((bits >> UInt32(bitCount)) & 0xff))
                }
            }
        }
        bits = 0
        guard bytes.count == Self.length + Self.checksumLength else {
            throw VaultError.param("a recovery key has 58 characters; this one has the wrong length")
        }
        let key = try bytes.withUnsafeBytes {
            try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[..<Self.length]))
        }
        guard try Self.checksum(key) == Array(bytes[Self.length...]) else {
            throw VaultError.param("the recovery key's checksum does not match: a character is wrong")
        }
        try self.init(key: key)
    }

    /// The printable form, as ASCII in secure memory (a secret: never put it in a String).
    public func printable() throws -> SecretBytes {
        var data: [UInt8] = []
        key.withUnsafeBytes { data += $0 }
        data += try Self.checksum(key)
        defer { data.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var out: [UInt8] = []
        var bits: UInt32 = 0
        var bitCount = 0
        func emit(_ value: UInt32) {
            if !out.isEmpty, (out.count + 1) % 5 == 0 { out.append(45) }  // a dash every 4 characters
            out.append(Self.alphabet[Int(value & 31)])
        }
        for byte in data {
            bits = (bits << 8) | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                emit(bits >> UInt32(bitCount))
            }
        }
        if bitCount > 0 { emit(bits << UInt32(5 - bitCount)) }
        bits = 0
        return try SecretBytes(consuming: &out)
    }

    private static func checksum(_ key: SecretBytes) throws -> [UInt8] {
        var raw: [UInt8] = []
        key.withUnsafeBytes { raw += $0 }
        defer { raw.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        return Array(
            try KeyedHash.blake2b(Array("arca.recovery.v1".utf8) + raw, outputLength: 16).prefix(checksumLength))
    }
}
