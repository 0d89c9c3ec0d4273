import ArcaCrypto
import ArcaProtocol

/// Kept by auth next to ``AuthStash`` when it derived the key from the copy arcad published
/// (``PublishedParameters``): the parameters it used, which the unlock sends with the key
/// (`loginUnlockDerived`), and the password, to derive again once if arcad answers that the
/// copy was stale (`staleParameters`): libpam clears `PAM_AUTHTOK` when auth returns. In
/// mlocked memory only, zeroed when open_session takes it or at `pam_end`.
///
/// Layout: uid u32, opsLimit u64, memoryLimit u64 (little-endian), salt (16 bytes), then the
/// password (1 to 4096 bytes).
///
/// A class, not a struct: open_session holds it as an optional, and an optional struct
/// holding an array is copied and destroyed through generic metadata that a fresh login
/// process builds at run time, by name (bench/pam/callgrind.sh); an optional reference is
/// a pointer.
final class PublishedStash {
    static let name = "arca:published"
    static let headerLength = 4 + 8 + 8 + ProtocolLimits.saltLength

    let uid: UInt32
    let parameters: KeyDerivationParameters
    let password: SecretBytes

    init(uid: UInt32, parameters: KeyDerivationParameters, password: SecretBytes) {
        self.uid = uid
        self.parameters = parameters
        self.password = password
    }

    func serialized() throws -> SecretBytes {
        try SecretBytes(count: Self.headerLength + password.count) { out in
            var offset = 0
            func put(_ value: UInt64, bytes: Int) {
                for i in 0..<bytes { out[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
                offset += bytes
            }
            put(UInt64(uid), bytes: 4)
            put(parameters.opsLimit, bytes: 8)
            put(parameters.memoryLimit, bytes: 8)
            for byte in parameters.salt.prefix(ProtocolLimits.saltLength) {
                out[offset] = byte
                offset += 1
            }
            password.withUnsafeBytes { raw in
                for i in 0..<raw.count { out[Self.headerLength + i] = raw[i] }
            }
        }
    }

    /// Parses a stash; `nil` when there is none or it is malformed.
    static func parse(_ stash: SecretBytes?) -> PublishedStash? {
        guard let stash, stash.count > headerLength,
            (1...ProtocolLimits.maximumPasswordLength).contains(stash.count - headerLength),
            let password = copyTail(of: stash, from: headerLength)
        else { return nil }
        func read(_ offset: Int, _ bytes: Int) -> UInt64 {
            stash.withUnsafeBytes { raw in
                var value: UInt64 = 0
                for i in 0..<bytes { value |= UInt64(raw[offset + i]) << (8 * UInt64(i)) }
                return value
            }
        }
        var salt = [UInt8](repeating: 0, count: ProtocolLimits.saltLength)
        for i in 0..<salt.count { salt[i] = UInt8(truncatingIfNeeded: read(20 + i, 1)) }
        return PublishedStash(
            uid: UInt32(truncatingIfNeeded: read(0, 4)),
            parameters: KeyDerivationParameters(opsLimit: read(4, 8), memoryLimit: read(12, 8), salt: salt),
            password: password)
    }
}
