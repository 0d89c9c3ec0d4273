import ArcaCrypto
import ArcaProtocol

/// What auth leaves for open_session in the PAM handle (`pam_set_data`): the
/// derived key, never the password. Serialized into guarded memory only.
///
/// Layout (70 bytes): version u8 = 1, flags u8 (1 unlocked in auth, 2 enrolling),
/// uid u32, ops u64, memory u64, salt 16, key 32; integers little-endian.
struct AuthStash {
    static let name = "arca:auth"
    static let length = 70

    var uid: UInt32
    /// The key already unlocked the vault during auth.
    var unlockedInAuth: Bool
    /// Set when no vault exists: the fresh parameters to enroll with.
    var enrollment: KDFParameters?
    var key: SecretBytes

    func serialized() throws -> SecretBytes {
        try SecretBytes(count: Self.length) { out in
            out[0] = 1
            out[1] = (unlockedInAuth ? 1 : 0) | (enrollment == nil ? 0 : 2)
            var offset = 2
            func put<T: FixedWidthInteger>(_ value: T) {
                withUnsafeBytes(of: value.littleEndian) { raw in
                    for byte in raw {
                        out[offset] = byte
                        offset += 1
                    }
                }
            }
            put(uid)
            put(enrollment?.opsLimit ?? 0)
            put(UInt64(enrollment?.memoryLimit ?? 0))
            let salt = enrollment?.salt ?? [UInt8](repeating: 0, count: KDFParameters.saltLength)
            for byte in salt.prefix(KDFParameters.saltLength) {
                out[offset] = byte
                offset += 1
            }
            key.withUnsafeBytes { raw in
                for byte in raw.prefix(Argon2id.keyLength) {
                    out[offset] = byte
                    offset += 1
                }
            }
        }
    }

    /// Parses a stash; `nil` when it is not one this build wrote.
    static func parse(_ stash: SecretBytes) -> AuthStash? {
        guard stash.count == length else { return nil }
        return stash.withUnsafeBytes { raw -> AuthStash? in
            guard raw[0] == 1 else { return nil }
            func read<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
                var value: T = 0
                for i in 0..<MemoryLayout<T>.size { value |= T(raw[offset + i]) << (8 * i) }
                return value
            }
            let flags = raw[1]
            let uid = read(UInt32.self, at: 2)
            let ops = read(UInt64.self, at: 6)
            let memory = read(UInt64.self, at: 14)
            let salt = Array(raw[22..<38])
            guard let key = try? SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[38..<70])) else {
                return nil
            }
            let enrollment =
                flags & 2 == 0 ? nil : KDFParameters(opsLimit: ops, memoryLimit: Int(clamping: memory), salt: salt)
            return AuthStash(uid: uid, unlockedInAuth: flags & 1 != 0, enrollment: enrollment, key: key)
        }
    }
}

/// What open_session leaves for close_session: the uid and the session token
/// given to arcad. Layout: uid u32 little-endian, then the token.
struct SessionStash {
    static let name = "arca:session"
    static let tokenLength = 16

    var uid: UInt32
    var token: SecretBytes

    func serialized() throws -> SecretBytes {
        try SecretBytes(count: 4 + token.count) { out in
            withUnsafeBytes(of: uid.littleEndian) { raw in
                for i in 0..<4 { out[i] = raw[i] }
            }
            token.withUnsafeBytes { raw in
                for i in 0..<raw.count { out[4 + i] = raw[i] }
            }
        }
    }

    static func parse(_ stash: SecretBytes) -> SessionStash? {
        guard stash.count == 4 + tokenLength else { return nil }
        return stash.withUnsafeBytes { raw -> SessionStash? in
            var uid: UInt32 = 0
            for i in 0..<4 { uid |= UInt32(raw[i]) << (8 * i) }
            guard let token = try? SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[4...])) else {
                return nil
            }
            return SessionStash(uid: uid, token: token)
        }
    }
}

extension SecretBytes {
    /// A plain array copy for a request field; the caller wipes the request
    /// (``Request/wipeSecrets()``) right after sending it.
    func requestBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
