/// A reply from arcad. It carries the request id of the request it answers.
/// Item data, recovery keys and candidate tokens are secrets: see ``wipeSecrets()``.
public enum Reply: Sendable, Hashable {
    /// The request succeeded and returns nothing.
    case ok
    /// The request failed. `status` is never ``ArcaStatus/success``; `message`
    /// is for humans and never contains a secret.
    case error(status: ArcaStatus, message: String)
    /// Answer to ``Request/status(uid:)``.
    case status(VaultStatus)
    /// Answer to ``Request/kdfParameters(uid:)``: the parameters, or `nil` when
    /// the user has no vault (the PAM module then enrolls).
    case kdfParameters(KeyDerivationParameters?)
    /// Answer to copy-matching, and to add (empty unless its `returnFlags`
    /// ask for something): the items asked for. Update and delete answer
    /// ``ok``.
    case items([ResultItem])
    /// A new recovery key (ASCII text as bytes, shown once): answer to enroll
    /// and ``Request/rotateRecoveryKey(uid:key:)``.
    case recoveryKey([UInt8])
    /// Answer to ``Request/listSessions``.
    case sessions([SessionInfo])
    /// Answer to ``Request/listGrants``.
    case grants([GrantEntry])
    /// Answer to the attribute-item requests.
    case attributeItems(AttributeItemList)
    /// Answer to ``Request/waitEvents(uid:after:timeoutMilliseconds:)``.
    case events(EventBatch)
    /// Answer to ``Request/searchAttributeReferences(uid:attributes:)``.
    case attributeReferences(AttributeReferenceList)
    /// Answer to ``Request/collectionSettings(uid:label:)``.
    case collectionSettings(CollectionSettings)
    /// Answer to ``Request/loginUnlock(uid:key:)`` when the key does not open
    /// the vault (errSecAuthFailed): the token, of
    /// ``ProtocolLimits/candidateTokenLength`` bytes, that lets this PAM
    /// transaction's session confirm the key. A secret of that transaction.
    case candidate(token: [UInt8])
    /// Answer to ``Request/loginUnlockDerived(uid:key:parameters:)`` when the key was
    /// derived with parameters other than the vault's, which these are: derive again.
    case staleParameters(KeyDerivationParameters)
    /// Answer to ``Request/exportItems(uid:secret:passphrase:)``: the backup's bytes
    /// (ciphertext: not a secret, but only the key it is sealed to opens it).
    case backup([UInt8])
    /// Answer to ``Request/importItems(uid:backup:secret:)``: how many items were added,
    /// replaced by a newer copy, or left as they were.
    case importSummary(added: UInt32, replaced: UInt32, unchanged: UInt32)
    /// Answer to ``Request/syncInit(uid:)``: this machine's device id (an Ed25519 public key).
    case syncDevice(id: [UInt8])
    /// Answer to ``Request/syncApprove(uid:device:shortAuthenticationString:)``: the signed
    /// approval (empty when only the string was asked for) and the string both devices show.
    case syncApproval(approval: [UInt8], shortAuthenticationString: String)
    /// Answer to ``Request/syncPull(uid:after:)``.
    case syncOutbox(SyncOutbox)
    /// Answer to ``Request/syncPush(uid:files:)``: one outcome per file, in order.
    case syncPushResult([SyncFileOutcome])
    /// Answer to ``Request/syncRemove(uid:device:)``.
    case syncRemoval(SyncRemoval)
    /// Answer to ``Request/syncStatus(uid:)``.
    case syncStatus(SyncStatus)
    /// Answer to ``Request/syncConflicts(uid:)``.
    case syncConflicts([SyncConflict])
    /// Answer to ``Request/stageExport(uid:secret:passphrase:)``: the staged backup's length in bytes.
    case backupStaged(length: UInt64)
    /// Answer to ``Request/readExport(uid:offset:)``: the next piece of the staged backup (ciphertext).
    case backupChunk([UInt8])
    /// Answer to ``Request/stageImport(uid:total:offset:chunk:)``: the bytes staged so far.
    case backupReceived(length: UInt64)

    /// The header kind of this reply.
    public var kind: MessageKind {
        switch self {
        case .ok: return .ok
        case .error: return .error
        case .status: return .statusReply
        case .kdfParameters: return .kdfParametersReply
        case .items: return .items
        case .recoveryKey: return .recoveryKey
        case .sessions: return .sessions
        case .grants: return .grants
        case .attributeItems: return .attributeItems
        case .events: return .events
        case .attributeReferences: return .attributeReferences
        case .collectionSettings: return .collectionSettingsReply
        case .candidate: return .candidate
        case .staleParameters: return .staleParameters
        case .backup: return .backup
        case .importSummary: return .importSummary
        case .syncDevice: return .syncDevice
        case .syncApproval: return .syncApproval
        case .syncOutbox: return .syncOutbox
        case .syncPushResult: return .syncPushResult
        case .syncRemoval: return .syncRemoval
        case .syncStatus: return .syncStatusReply
        case .syncConflicts: return .syncConflictsReply
        case .backupStaged: return .backupStaged
        case .backupChunk: return .backupChunk
        case .backupReceived: return .backupReceived
        }
    }
}

/// The lock state of one user's vault, as `arca status` shows it.
public struct VaultStatus: Sendable, Hashable {
    /// The user.
    public var uid: UInt32
    /// Whether the user has a vault at all.
    public var hasVault: Bool
    /// The classes whose keys are loaded (the others are locked).
    public var unlocked: LockClasses
    /// Open PAM sessions of the user.
    public var sessionCount: UInt32
    /// An administrator reset the login password and the vault still awaits
    /// the old password or the recovery key.
    public var passwordOutOfSync: Bool
    /// Items served by arcad over the socket because the kernel cannot hold them.
    public var itemsNotInKernel: UInt32
    /// Whether a recovery key is enrolled for the vault.
    public var hasRecoveryKey: Bool
    /// Classes that are locked in the vault but whose kernel keys arcad could not
    /// all destroy: the lock is incomplete and their secrets may still be readable.
    public var lockIncomplete: LockClasses

    /// A status from its parts.
    public init(
        uid: UInt32, hasVault: Bool, unlocked: LockClasses, sessionCount: UInt32, passwordOutOfSync: Bool,
        itemsNotInKernel: UInt32, hasRecoveryKey: Bool = false, lockIncomplete: LockClasses = []
    ) {
        self.uid = uid
        self.hasVault = hasVault
        self.unlocked = unlocked
        self.sessionCount = sessionCount
        self.passwordOutOfSync = passwordOutOfSync
        self.itemsNotInKernel = itemsNotInKernel
        self.hasRecoveryKey = hasRecoveryKey
        self.lockIncomplete = lockIncomplete
    }
}

/// One match of a query.
public struct ResultItem: Sendable, Hashable {
    /// The attributes, when asked for (`kSecReturnAttributes`).
    public var attributes: AttributeMap
    /// The secret, when asked for (`kSecReturnData`).
    public var data: [UInt8]?
    /// The persistent reference, when asked for (`kSecReturnPersistentRef`).
    public var persistentRef: [UInt8]?

    /// A result item from its parts.
    public init(attributes: AttributeMap = [:], data: [UInt8]? = nil, persistentRef: [UInt8]? = nil) {
        self.attributes = attributes
        self.data = data
        self.persistentRef = persistentRef
    }
}

/// One open PAM session, as listed for root.
public struct SessionInfo: Sendable, Hashable {
    /// A number arcad gives the session (not its token).
    public var id: UInt64
    /// The user.
    public var uid: UInt32
    /// The PAM service that opened it.
    public var service: String
    /// `PAM_TTY`, when known.
    public var tty: String?
    /// `PAM_RHOST`, when known.
    public var remoteHost: String?
    /// `PAM_RUSER`, when known.
    public var remoteUser: String?
    /// When it opened, in microseconds since the Unix epoch.
    public var openedAt: Int64
    /// Whether it is locked: the user's whenUnlocked items are out of the kernel, or
    /// the screen of the logind session it was opened in is locked.
    public var locked: Bool

    /// A session from its parts.
    public init(
        id: UInt64, uid: UInt32, service: String, tty: String? = nil, remoteHost: String? = nil,
        remoteUser: String? = nil, openedAt: Int64, locked: Bool
    ) {
        self.id = id
        self.uid = uid
        self.service = service
        self.tty = tty
        self.remoteHost = remoteHost
        self.remoteUser = remoteUser
        self.openedAt = openedAt
        self.locked = locked
    }
}
