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

    /// Parses a stash; `nil` when there is none or it is not one this build wrote.
    static func parse(_ stash: SecretBytes?) -> AuthStash? {
        guard let stash, stash.count >= headerLength else { return nil }
        // Scalars out of each closure, never an optional struct: see `parseUIDAndToken`.
        let (version, code) = (stash.withUnsafeBytes { $0[0] }, stash.withUnsafeBytes { $0[1] })
        let uid = readUID(stash, at: 2)
        guard version == 2 else { return nil }
        switch (code, stash.count - headerLength) {
        case (1, Argon2id.keyLength):
            guard let key = copyTail(of: stash, from: headerLength) else { return nil }
            return AuthStash(uid: uid, plan: .unlock(key))
        case (2, 0):
            return AuthStash(uid: uid, plan: .unlockedInAuth)
        case (3, 1...ProtocolLimits.maximumPasswordLength):
            guard let password = copyTail(of: stash, from: headerLength) else { return nil }
            return AuthStash(uid: uid, plan: .enroll(password: password))
        default:
            return nil
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

    static func parse(_ stash: SecretBytes?) -> SessionStash? {
        guard let parsed = parseUIDAndToken(stash, tokenLength: tokenLength) else { return nil }
        return SessionStash(uid: parsed.uid, token: parsed.token)
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

    static func parse(_ stash: SecretBytes?) -> CandidateStash? {
        guard let parsed = parseUIDAndToken(stash, tokenLength: ProtocolLimits.candidateTokenLength) else {
            return nil
        }
        return CandidateStash(uid: parsed.uid, token: parsed.token)
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

// A fresh login process pays tens of microseconds for each generic type whose metadata
// it builds at run time, by name (perf on bench/pam/fresh.c). So the parsers take the
// optional stash (callers never `flatMap` into them), and the closures given to
// SecretBytes' generic `withUnsafeBytes` return scalars, whose metadata is static,
// never an optional struct or tuple.
private func parseUIDAndToken(_ stash: SecretBytes?, tokenLength: Int) -> (uid: UInt32, token: SecretBytes)? {
    guard let stash, stash.count == 4 + tokenLength, let token = copyTail(of: stash, from: 4) else { return nil }
    return (readUID(stash, at: 0), token)
}

/// The little-endian u32 at `offset` (the caller checked the length).
private func readUID(_ stash: SecretBytes, at offset: Int) -> UInt32 {
    stash.withUnsafeBytes { raw in
        var uid: UInt32 = 0
        for i in 0..<4 { uid |= UInt32(raw[offset + i]) << (8 * i) }
        return uid
    }
}

/// The bytes of `stash` from `offset` on, in a SecretBytes of their own.
func copyTail(of stash: SecretBytes, from offset: Int) -> SecretBytes? {
    try? SecretBytes(count: stash.count - offset) { out in
        stash.withUnsafeBytes { raw in
            for i in 0..<out.count { out[i] = raw[offset + i] }
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
