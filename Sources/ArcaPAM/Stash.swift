import ArcaCrypto
import ArcaProtocol

/// What auth leaves for open_session in the PAM handle (`pam_set_data`): what to
/// do there and what it needs. Serialized into mlocked memory (SecretBytes) only, zeroed when
/// open_session takes it or at `pam_end`.
///
/// Layout: version u8 = 2, plan u8, uid u32 little-endian, then by plan:
/// 1 unlock: the derived key (32 bytes); 2 unlocked in auth already: nothing;
/// 3 enroll: the password (1 to 4096 bytes).
struct AuthStash {
    static let name = "arca:auth"
    static let headerLength = 6

    /// What open_session does.
    enum Plan {
        /// Unlock with this derived key (never the password).
        case unlock(SecretBytes)
        /// Nothing: auth unlocked (unlock_in_auth, or a screen locker).
        case unlockedInAuth
        /// No vault yet: calibrate, derive from this password, enroll. libpam
        /// clears `PAM_AUTHTOK` when auth returns, so the password itself waits
        /// here (as pam_gnome_keyring's does): calibrating in auth would cost
        /// every sudo of such a user most of a second and a quarter of RAM.
        case enroll(password: SecretBytes)
    }

    var uid: UInt32
    var plan: Plan

    func serialized() throws -> SecretBytes {
        let (code, payload): (UInt8, SecretBytes?) =
            switch plan {
            case .unlock(let key): (1, key)
            case .unlockedInAuth: (2, nil)
            case .enroll(let password): (3, password)
            }
        return try SecretBytes(count: Self.headerLength + (payload?.count ?? 0)) { out in
            out[0] = 2
            out[1] = code
            withUnsafeBytes(of: uid.littleEndian) { raw in
                for i in 0..<4 { out[2 + i] = raw[i] }
            }
            // Not `payload?.withUnsafeBytes`: its `()?` result is generic metadata that
            // a fresh login process instantiates at run time, by name, once.
            if let payload {
                payload.withUnsafeBytes { raw in
                    for i in 0..<raw.count { out[Self.headerLength + i] = raw[i] }
                }
            }
        }
    }

    /// Parses a stash; `nil` when it is not one this build wrote.
    static func parse(_ stash: SecretBytes) -> AuthStash? {
        guard stash.count >= headerLength else { return nil }
        return stash.withUnsafeBytes { raw -> AuthStash? in
            guard raw[0] == 2 else { return nil }
            var uid: UInt32 = 0
            for i in 0..<4 { uid |= UInt32(raw[2 + i]) << (8 * i) }
            let payload = UnsafeRawBufferPointer(rebasing: raw[headerLength...])
            switch (raw[1], payload.count) {
            case (1, Argon2id.keyLength):
                return (try? SecretBytes(copying: payload)).map { AuthStash(uid: uid, plan: .unlock($0)) }
            case (2, 0):
                return AuthStash(uid: uid, plan: .unlockedInAuth)
            case (3, 1...ProtocolLimits.maximumPasswordLength):
                return (try? SecretBytes(copying: payload)).map { AuthStash(uid: uid, plan: .enroll(password: $0)) }
            default:
                return nil
            }
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

    func serialized() throws -> SecretBytes { try serializeUIDAndToken(uid, token) }

    static func parse(_ stash: SecretBytes) -> SessionStash? {
        parseUIDAndToken(stash, tokenLength: tokenLength).map { SessionStash(uid: $0.uid, token: $0.token) }
    }
}

/// The candidate token arcad returned with this handle's failed `loginUnlock`,
/// kept for this handle's open_session only (pam_arca(8), PASSWORDS CHANGED
/// ELSEWHERE). Layout: uid u32 little-endian, then the 32-byte token.
struct CandidateStash {
    static let name = "arca:candidate"

    var uid: UInt32
    var token: SecretBytes

    func serialized() throws -> SecretBytes { try serializeUIDAndToken(uid, token) }

    static func parse(_ stash: SecretBytes) -> CandidateStash? {
        parseUIDAndToken(stash, tokenLength: ProtocolLimits.candidateTokenLength).map {
            CandidateStash(uid: $0.uid, token: $0.token)
        }
    }
}

private func serializeUIDAndToken(_ uid: UInt32, _ token: SecretBytes) throws -> SecretBytes {
    try SecretBytes(count: 4 + token.count) { out in
        withUnsafeBytes(of: uid.littleEndian) { raw in
            for i in 0..<4 { out[i] = raw[i] }
        }
        token.withUnsafeBytes { raw in
            for i in 0..<raw.count { out[4 + i] = raw[i] }
        }
    }
}

private func parseUIDAndToken(_ stash: SecretBytes, tokenLength: Int) -> (uid: UInt32, token: SecretBytes)? {
    guard stash.count == 4 + tokenLength else { return nil }
    return stash.withUnsafeBytes { raw -> (uid: UInt32, token: SecretBytes)? in
        var uid: UInt32 = 0
        for i in 0..<4 { uid |= UInt32(raw[i]) << (8 * i) }
        guard let token = try? SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[4...])) else { return nil }
        return (uid, token)
    }
}

extension SecretBytes {
    /// A plain array copy for a request field; the caller wipes the request
    /// (``Request/wipeSecrets()``) right after sending it.
    func requestBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
