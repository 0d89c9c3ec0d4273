/// The hard limits of the wire format. The decoder rejects anything beyond
/// them before allocating, and the encoder refuses to produce it, so every
/// frame one side can write the other side accepts.
public enum ProtocolLimits {
    /// The protocol version this build speaks, carried in every header.
    public static let version: UInt16 = 1
    /// Size of the fixed header: magic, version, kind, request id, body length.
    public static let headerLength = 16
    /// Largest whole frame (header + body): 2 MiB, twice the largest secret.
    public static let maximumFrameLength = 2 << 20
    /// The message of the `.bufferTooSmall` error arcad sends when its reply would pass
    /// `maximumFrameLength` (a client that batched reads splits the batch on the status).
    public static let replyTooLargeMessage = "reply too large"
    /// Largest body a header may announce.
    public static let maximumBodyLength = maximumFrameLength - headerLength
    /// Largest item secret (`kSecValueData`): 1 MiB.
    public static let maximumSecretLength = 1 << 20
    /// Largest backup file carried in one frame (`arca export`/`import`): what fits beside a
    /// passphrase in the largest body.
    public static let maximumBackupLength = maximumBodyLength - 2 * maximumPasswordLength - 64
    /// Largest piece of a backup in one request or reply (``Request/stageImport(uid:total:offset:chunk:)``,
    /// ``Reply/backupChunk(_:)``): 1 MiB, so a chunk and its header always fit in one frame.
    public static let maximumBackupChunkLength = 1 << 20
    /// Largest backup moved in chunks: what the 64-bit offsets of the chunk requests allow. arcad's own
    /// staging cap (256 MiB per user) is far below it.
    public static let maximumStagedBackupLength: UInt64 = 1 << 40
    /// Largest string attribute (service, account, label, …).
    public static let maximumStringLength = 16 << 10
    /// Largest bytes attribute (`generic`).
    public static let maximumBytesAttributeLength = 64 << 10
    /// Largest persistent reference.
    public static let maximumPersistentRefLength = 64
    /// Largest name: PAM service, tty, remote host or user.
    public static let maximumNameLength = 1024
    /// Largest session token.
    public static let maximumTokenLength = 256
    /// Largest password (`unlockWithPassword`); PAM's own limit is 512.
    public static let maximumPasswordLength = 4096
    /// Largest recovery key text.
    public static let maximumRecoveryKeyLength = 256
    /// Largest human message in an error reply.
    public static let maximumErrorMessageLength = 4096
    /// Most result items or sessions in one reply.
    public static let maximumListCount = 65_536
    /// Most attributes of one Secret Service item.
    public static let maximumSecretAttributeCount = 64
    /// Most references in one get request.
    public static let maximumReferenceCount = 65_536
    /// Longest wait for vault events: below arcad's and clients' socket timeouts.
    public static let maximumEventWaitMilliseconds: UInt32 = 25_000
    /// Length of a candidate token (``Reply/candidate(token:)``).
    public static let candidateTokenLength = 32
    /// A sync device id: an Ed25519 public key.
    public static let syncDeviceIDLength = 32
    /// A sync item reference.
    public static let syncItemRefLength = 16
    /// A sync record hash (BLAKE2b-256).
    public static let syncHashLength = 32
    /// Largest sync record, head or approval file: 1 MiB (ArcaSync's own limit).
    public static let maximumSyncFileLength = 1 << 20
    /// Length of a password-derived vault key.
    public static let derivedKeyLength = 32
    /// Length of an Argon2id salt (libsodium's `crypto_pwhash_SALTBYTES`).
    public static let saltLength = 16
}
