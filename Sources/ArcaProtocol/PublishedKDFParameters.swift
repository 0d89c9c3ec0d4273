/// The KDF parameters of one user's vault as arcad publishes them for pam_arca, so that a
/// login's auth derives the key without a connection to arcad (issue 16 §7). They are not
/// secret (the vault's header holds them), but they decide which key a login sends: only a
/// file root wrote, 0600, in a root-owned directory that no one else may write, and whose
/// publisher is still running, is believed; anything else sends pam_arca to arcad's
/// `kdfParameters` request, as before.
///
/// File: `<socket>.kdf/<uid>` (``path(socketPath:uid:)``), so that each arcad (a test's, a
/// second instance) has its own. Layout, 56 bytes, integers little-endian:
///
///     offset  size  field
///     0       8     magic "ARCAKDF1"
///     8       4     publisher pid (u32): the arcad that wrote the file
///     12      8     publisher start time (u64): field 22 of /proc/PID/stat, clock ticks
///                   since boot; with the pid, names one process (a reused pid has another)
///     20      4     uid (u32) whose vault this is
///     24      8     Argon2id opsLimit (u64)
///     32      8     Argon2id memoryLimit in bytes (u64)
///     40      16    salt (ProtocolLimits.saltLength bytes)
///
/// arcad rewrites the file (temporary file, then rename) whenever the vault's parameters
/// change (enrollment, password change, recovery, a pending re-wrap), when it opens the
/// vault, when root asks for the parameters (pam_arca asks only when it could not believe
/// the file), when a login's unlock fails, and when a login's key came with parameters that
/// are not the vault's (``Request/loginUnlockDerived(uid:key:parameters:)``); a file whose
/// publisher is gone (arcad restarted, crashed, or was replaced by a version that does not
/// publish) is stale. A stale file from a live publisher (tampered with, or left by a failed
/// write) costs a login one extra derivation, never a wrong guess or a candidate.
public struct PublishedKDFParameters: Sendable, Equatable {
    /// The file's total length.
    public static let length = 56
    /// "ARCAKDF1".
    static let magic: [UInt8] = [0x41, 0x52, 0x43, 0x41, 0x4B, 0x44, 0x46, 0x31]

    /// The process id of the arcad that wrote the file.
    public var publisherPID: UInt32
    /// That process's start time (field 22 of `/proc/PID/stat`).
    public var publisherStartTime: UInt64
    /// The vault owner.
    public var uid: UInt32
    /// The vault's Argon2id parameters.
    public var parameters: KeyDerivationParameters

    /// A publication from its parts.
    public init(publisherPID: UInt32, publisherStartTime: UInt64, uid: UInt32, parameters: KeyDerivationParameters) {
        self.publisherPID = publisherPID
        self.publisherStartTime = publisherStartTime
        self.uid = uid
        self.parameters = parameters
    }

    /// The directory of the publications of the arcad listening on `socketPath`.
    public static func directory(socketPath: String) -> String { socketPath + ".kdf" }

    /// The file name of `uid`'s publication inside ``directory(socketPath:)``.
    public static func fileName(uid: UInt32) -> String { String(uid) }

    /// The path of `uid`'s publication by the arcad listening on `socketPath`.
    public static func path(socketPath: String, uid: UInt32) -> String {
        directory(socketPath: socketPath) + "/" + fileName(uid: uid)
    }

    /// The file's bytes. Precondition (the caller's): the salt is ``ProtocolLimits/saltLength`` bytes.
    public func encoded() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(Self.length)
        append(publisherPID, to: &out)
        append(publisherStartTime, to: &out)
        append(uid, to: &out)
        append(parameters.opsLimit, to: &out)
        append(parameters.memoryLimit, to: &out)
        out += parameters.salt
        return out
    }

    /// Decodes a file; every input gets a value or a named error.
    public init(decoding bytes: [UInt8]) throws(ProtocolError) {
        guard bytes.count == Self.length else {
            throw .wrongLength(field: "published KDF parameters", length: bytes.count, expected: Self.length)
        }
        for i in 0..<Self.magic.count where bytes[i] != Self.magic[i] { throw .badMagic }
        let salt = Array(bytes[40..<Self.length])
        self.init(
            publisherPID: UInt32(truncatingIfNeeded: Self.integer(bytes, at: 8, size: 4)),
            publisherStartTime: Self.integer(bytes, at: 12, size: 8),
            uid: UInt32(truncatingIfNeeded: Self.integer(bytes, at: 20, size: 4)),
            parameters: KeyDerivationParameters(
                opsLimit: Self.integer(bytes, at: 24, size: 8), memoryLimit: Self.integer(bytes, at: 32, size: 8),
                salt: salt))
    }

    private func append(_ value: UInt32, to out: inout [UInt8]) {
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    private func append(_ value: UInt64, to out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    /// The little-endian integer of `size` bytes at `offset` (the caller checked the length).
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<size { value |= UInt64(bytes[offset + i]) << (8 * i) }
        return value
    }
}
