/// Result codes shared by every layer and carried on the wire. The numbers are
/// Apple's `OSStatus` values, so ported Keychain code keeps working.
public enum ArcaStatus: Int32, Sendable, CaseIterable {
    /// No error.
    case success = 0
    /// A parameter was invalid (`errSecParam`).
    case param = -50
    /// arcad is not running or not reachable (`errSecNotAvailable`).
    case notAvailable = -25291
    /// Wrong password or key (`errSecAuthFailed`).
    case authFailed = -25293
    /// An item with the same primary key exists (`errSecDuplicateItem`).
    case duplicateItem = -25299
    /// No item matched (`errSecItemNotFound`).
    case itemNotFound = -25300
    /// The reply would not fit in one frame (`errSecBufferTooSmall`): arcad's answer, with
    /// `ProtocolLimits.replyTooLargeMessage`, to a request whose reply passes
    /// `ProtocolLimits.maximumFrameLength`; a client that batched reads splits the batch.
    case bufferTooSmall = -25301
    /// The item's class is locked (`errSecInteractionNotAllowed`); never "not found".
    case interactionNotAllowed = -25308
    /// Data could not be decoded: a damaged vault or message (`errSecDecode`).
    case decode = -26275
    /// The caller may not use this access group or principal (`errSecMissingEntitlement`).
    case missingEntitlement = -34018
    /// A lock could not destroy every kernel key of the class (`errSecInternalComponent`):
    /// the secrets may still be readable, and the lock is not done.
    case internalComponent = -2070
    /// The user's vault is at its size limit, arca.conf `max_vault_bytes` (`errSecQuotaExceeded`).
    case quotaExceeded = -67596
}

/// The version of Arca and of its socket protocol.
public enum ArcaVersion {
    /// The release, as printed by `arca version` and `arcad --version`.
    public static let release = "0.1.0"
}
