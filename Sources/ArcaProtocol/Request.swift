/// A request from a client (the PAM module, the CLI, the library) to arcad.
/// arcad decides each one from the peer's `SO_PEERCRED`: a user may name only
/// their own uid, root any uid.
///
/// Secret fields (`key`, `oldKey`, `newKey`, `password`, `recoveryKey`,
/// `token`, `candidate`, `session`, `secret`) are `[UInt8]`, never `String`. After decoding, move each
/// into `SecretBytes(consuming:)` at once (which zeroes the array), or call
/// ``wipeSecrets()``; then wipe the frame buffer with ``SecureWipe/zero(_:)``.
public enum Request: Sendable, Hashable {
    /// Lock state of a user's vault; `nil` means the peer's own uid.
    case status(uid: UInt32?)
    /// The Argon2id parameters of a user's vault, so that the PAM module can
    /// derive the key itself. Replied with ``Reply/kdfParameters(_:)``.
    case kdfParameters(uid: UInt32)
    /// Unlock with a password-derived key of ``ProtocolLimits/derivedKeyLength`` bytes.
    case unlock(uid: UInt32, key: [UInt8])
    /// First login: create the vault wrapped by `key`, derived with `parameters`.
    /// Replied with ``Reply/recoveryKey(_:)`` (shown once) or ``Reply/ok``.
    case enroll(uid: UInt32, key: [UInt8], parameters: KeyDerivationParameters)
    /// A PAM session opened.
    case openSession(SessionOpening)
    /// A PAM session closed; `token` is the one given at opening.
    case closeSession(uid: UInt32, token: [UInt8])
    /// Remove the given classes of a user from the kernel.
    case lock(uid: UInt32, classes: LockClasses)
    /// Remove every class of every vault the peer may act on (root: all users).
    case lockAll
    /// Unlock with the password itself (the CLI path; arcad derives the key).
    case unlockWithPassword(uid: UInt32, password: [UInt8])
    /// `SecItemAdd`.
    case add(AddRequest)
    /// `SecItemCopyMatching`. Replied with ``Reply/items(_:)``.
    case copyMatching(vault: VaultID, query: Query)
    /// `SecItemUpdate`.
    case update(UpdateRequest)
    /// `SecItemDelete`.
    case delete(vault: VaultID, query: Query)
    /// The login password changed: re-wrap the vault from `oldKey` to `newKey`.
    case changePassword(uid: UInt32, oldKey: [UInt8], newKey: [UInt8], parameters: KeyDerivationParameters)
    /// Root reset the login password without the old one: arcad keeps `newKey`
    /// until an unlock with the old key (or recovery) lets it re-wrap.
    case passwordReset(uid: UInt32, newKey: [UInt8], parameters: KeyDerivationParameters)
    /// Unlock with the recovery key text and re-wrap to a new password-derived key.
    case recover(uid: UInt32, recoveryKey: [UInt8], newKey: [UInt8], parameters: KeyDerivationParameters)
    /// Replace the recovery key, proving the password with `key`.
    /// Replied with ``Reply/recoveryKey(_:)``.
    case rotateRecoveryKey(uid: UInt32, key: [UInt8])
    /// Every open session (root only). Replied with ``Reply/sessions(_:)``.
    case listSessions
    /// Adds `principals` to every system item matching `query` (root only).
    case grant(query: Query, principals: [Principal])
    /// Removes `principals` from every system item matching `query`; an empty
    /// list removes every principal (root only). Takes effect in the kernel at once.
    case revokeGrant(query: Query, principals: [Principal])
    /// Every system item that has principals (root only). Replied with ``Reply/grants(_:)``.
    case listGrants
    /// Adds a Secret Service attribute item (or replaces the one with equal attributes).
    case addAttributeItem(AttributeItemAdd)
    /// Attribute items whose attributes include every given pair (exact, case-sensitive);
    /// `[:]` lists them all. Replied with ``Reply/attributeItems(_:)``; with no key held, locked.
    case searchAttributeItems(uid: UInt32, attributes: SecretAttributes, returnSecrets: Bool)
    /// Attribute items by reference; unknown ones are left out, locked ones listed as locked.
    case getAttributeItems(uid: UInt32, references: [[UInt8]], returnSecrets: Bool)
    /// Changes an attribute item.
    case updateAttributeItem(AttributeItemUpdate)
    /// Deletes an attribute item.
    case deleteAttributeItem(uid: UInt32, reference: [UInt8])
    /// Waits up to `timeoutMilliseconds` (at most ``ProtocolLimits/maximumEventWaitMilliseconds``)
    /// for events of the user's vault numbered after `after`. Replied with ``Reply/events(_:)``.
    case waitEvents(uid: UInt32, after: UInt64, timeoutMilliseconds: UInt32)
    /// Like ``searchAttributeItems(uid:attributes:returnSecrets:)`` but replied with the
    /// references only (``Reply/attributeReferences(_:)``): what a D-Bus search returns.
    case searchAttributeReferences(uid: UInt32, attributes: SecretAttributes)
    /// The Secret Service's login collection: its label (set first when `label` is
    /// given, kept in the vault) and the class of new items. Replied with ``Reply/collectionSettings(_:)``.
    case collectionSettings(uid: UInt32, label: String?)
    /// Unlock from the login stack (root only, pam_arca). Replied with ``Reply/ok``,
    /// or, when `key` does not open the vault, with ``Reply/candidate(token:)``:
    /// arcad keeps the key for a while as a possible new login password, which
    /// only ``confirmCandidate(uid:candidate:session:)`` with that token can confirm.
    case loginUnlock(uid: UInt32, key: [UInt8])
    /// ``loginUnlock(uid:key:)`` with the KDF parameters `key` was derived with: pam_arca
    /// sends it when it took them from the copy arcad published (``PublishedKDFParameters``).
    /// When they are not the vault's (a stale copy), arcad counts no guess, keeps no
    /// candidate, republishes, and replies ``Reply/staleParameters(_:)``; otherwise as
    /// ``loginUnlock(uid:key:)``.
    case loginUnlockDerived(uid: UInt32, key: [UInt8], parameters: KeyDerivationParameters)
    /// The PAM transaction that got `candidate` from ``loginUnlock(uid:key:)``
    /// opened the session `session` (root only): the login stack let that
    /// password in. The same key confirmed by two transactions, each in its own
    /// session, becomes the new login password the vault is out of sync with.
    case confirmCandidate(uid: UInt32, candidate: [UInt8], session: [UInt8])
    /// Every item of the user's vault that may leave the machine (not ThisDeviceOnly), sealed
    /// into a backup (`arca export`): to the recovery key whose text is `secret`, or, with
    /// `passphrase`, to `secret` stretched with Argon2id. Replied with ``Reply/backup(_:)``.
    case exportItems(uid: UInt32, secret: [UInt8], passphrase: Bool)
    /// Merges a backup made by ``exportItems(uid:secret:passphrase:)`` into the user's vault
    /// (`arca import`); `secret` opens it as it was sealed. Replied with
    /// ``Reply/importSummary(added:replaced:unchanged:)``.
    case importItems(uid: UInt32, backup: [UInt8], secret: [UInt8])
    /// Creates the user's sync circle on this machine (`arca sync init`): a device key and an
    /// epoch key, kept in arcad's state directory. Replied with ``Reply/syncDevice(id:)``.
    case syncInit(uid: UInt32)
    /// Makes a device identity for the user on this machine that waits to be approved by the
    /// member `approver` (`arca sync join`). Refused if sync is set up here already.
    /// Replied with ``Reply/syncDevice(id:)``.
    case syncJoin(uid: UInt32, approver: [UInt8])
    /// On a member: approves `device` into the circle (`arca sync approve`). With
    /// `shortAuthenticationString` nil, only shows the string both devices display
    /// (``Reply/syncApproval(approval:shortAuthenticationString:)`` with an empty approval);
    /// given, it must equal that string, and the approval is signed and published in the outbox.
    case syncApprove(uid: UInt32, device: [UInt8], shortAuthenticationString: String?)
    /// This device's own ciphertext for the agent to write into its folder: records numbered
    /// after `after`, its head, its approvals. Replied with ``Reply/syncOutbox(_:)``.
    case syncPull(uid: UInt32, after: UInt64)
    /// Files read from the other devices' folders: verified and merged, or queued while the
    /// vault is locked. Replied with ``Reply/syncPushResult(_:)``, one outcome per file.
    /// Push a folder's approval only from `approvals/<this device>` (one for another device is
    /// refused), records in sequence order, then its head. Pushing a file again is harmless
    /// (`duplicate`), so an agent that starts pushes every peer file it finds.
    case syncPush(uid: UInt32, files: [SyncFile])
    /// Removes `device` from the circle and rotates to a new epoch key (`arca sync remove`).
    /// Replied with ``Reply/syncRemoval(_:)``.
    case syncRemove(uid: UInt32, device: [UInt8])
    /// The circle's state on this machine (`arca sync status`). Replied with ``Reply/syncStatus(_:)``;
    /// `detailed` asks for ``SyncStatus/detail`` too (a trailing flags byte that older arcads do
    /// not accept; without it the reply keeps the form older clients parse).
    case syncStatus(uid: UInt32, detailed: Bool = false)
    /// Items with conflict siblings (`arca find --conflicts`). Replied with ``Reply/syncConflicts(_:)``.
    case syncConflicts(uid: UInt32)
    /// Resolves a conflict by keeping version `keep` (a record hash) of `item` (`arca resolve`).
    case syncResolve(uid: UInt32, item: [UInt8], keep: [UInt8])
    /// On a fresh device, when every device of the circle is lost (`arca sync recover`): the
    /// recovery key whose text is `secret` opens a recovery seal among `files` (approvals of
    /// the synced folder) and the circle is taken over by a new device identity here, the old
    /// devices removed after their last head among `files`. Replied with ``Reply/syncDevice(id:)``.
    case syncRecover(uid: UInt32, files: [SyncFile], secret: [UInt8])
    /// Like ``exportItems(uid:secret:passphrase:)``, for a backup of any size: arcad seals it and
    /// keeps it for this connection only, which then reads it with ``readExport(uid:offset:)``.
    /// Replied with ``Reply/backupStaged(length:)``. Closing the connection drops it.
    case stageExport(uid: UInt32, secret: [UInt8], passphrase: Bool)
    /// The next piece (at most ``ProtocolLimits/maximumBackupChunkLength`` bytes) of the backup this
    /// connection staged: `offset` must be where the previous piece ended. Replied with
    /// ``Reply/backupChunk(_:)``; the last piece drops the staged copy.
    case readExport(uid: UInt32, offset: UInt64)
    /// A piece of a backup file for ``importStaged(uid:secret:)``: `total` is the whole file's length,
    /// `offset` where this piece starts (0 starts a new staging, then each piece must follow the
    /// previous one exactly). Replied with ``Reply/backupReceived(length:)``.
    case stageImport(uid: UInt32, total: UInt64, offset: UInt64, chunk: [UInt8])
    /// Merges the backup this connection staged with ``stageImport(uid:total:offset:chunk:)``, once
    /// complete, exactly as ``importItems(uid:backup:secret:)``. Replied with
    /// ``Reply/importSummary(added:replaced:unchanged:)``.
    case importStaged(uid: UInt32, secret: [UInt8])

    /// The header kind of this request.
    public var kind: MessageKind {
        switch self {
        case .status: return .status
        case .kdfParameters: return .kdfParameters
        case .unlock: return .unlock
        case .enroll: return .enroll
        case .openSession: return .openSession
        case .closeSession: return .closeSession
        case .lock: return .lock
        case .lockAll: return .lockAll
        case .unlockWithPassword: return .unlockWithPassword
        case .add: return .add
        case .copyMatching: return .copyMatching
        case .update: return .update
        case .delete: return .delete
        case .changePassword: return .changePassword
        case .passwordReset: return .passwordReset
        case .recover: return .recover
        case .rotateRecoveryKey: return .rotateRecoveryKey
        case .listSessions: return .listSessions
        case .grant: return .grant
        case .revokeGrant: return .revokeGrant
        case .listGrants: return .listGrants
        case .addAttributeItem: return .addAttributeItem
        case .searchAttributeItems: return .searchAttributeItems
        case .getAttributeItems: return .getAttributeItems
        case .updateAttributeItem: return .updateAttributeItem
        case .deleteAttributeItem: return .deleteAttributeItem
        case .waitEvents: return .waitEvents
        case .searchAttributeReferences: return .searchAttributeReferences
        case .collectionSettings: return .collectionSettings
        case .loginUnlock: return .loginUnlock
        case .loginUnlockDerived: return .loginUnlockDerived
        case .confirmCandidate: return .confirmCandidate
        case .exportItems: return .exportItems
        case .importItems: return .importItems
        case .syncInit: return .syncInit
        case .syncJoin: return .syncJoin
        case .syncApprove: return .syncApprove
        case .syncPull: return .syncPull
        case .syncPush: return .syncPush
        case .syncRemove: return .syncRemove
        case .syncStatus: return .syncStatus
        case .syncConflicts: return .syncConflicts
        case .syncResolve: return .syncResolve
        case .stageExport: return .stageExport
        case .readExport: return .readExport
        case .stageImport: return .stageImport
        case .importStaged: return .importStaged
        case .syncRecover: return .syncRecover
        }
    }
}

/// A PAM session being opened.
public struct SessionOpening: Sendable, Hashable {
    /// The user of the session.
    public var uid: UInt32
    /// An opaque token chosen by the PAM module, presented again at close.
    public var token: [UInt8]
    /// The PAM service (`login`, `sshd`, `gdm-password`…).
    public var service: String
    /// `PAM_TTY`, when set.
    public var tty: String?
    /// `PAM_RHOST`, when set.
    public var remoteHost: String?
    /// `PAM_RUSER`, when set.
    public var remoteUser: String?

    /// A session opening from its parts.
    public init(
        uid: UInt32, token: [UInt8], service: String, tty: String? = nil, remoteHost: String? = nil,
        remoteUser: String? = nil
    ) {
        self.uid = uid
        self.token = token
        self.service = service
        self.tty = tty
        self.remoteHost = remoteHost
        self.remoteUser = remoteUser
    }
}

/// `SecItemAdd`: a new item of a class with its attributes and secret.
public struct AddRequest: Sendable, Hashable {
    /// The vault to add to.
    public var vault: VaultID
    /// The class of the new item.
    public var itemClass: ItemClass
    /// The new item's attributes (without `itemClass` and the store-set dates).
    public var attributes: AttributeMap
    /// The secret (`kSecValueData`), at most ``ProtocolLimits/maximumSecretLength``.
    public var secret: [UInt8]
    /// What to return about the added item.
    public var returnFlags: ReturnFlags

    /// An add request from its parts.
    public init(
        vault: VaultID, itemClass: ItemClass, attributes: AttributeMap, secret: [UInt8],
        returnFlags: ReturnFlags = []
    ) {
        self.vault = vault
        self.itemClass = itemClass
        self.attributes = attributes
        self.secret = secret
        self.returnFlags = returnFlags
    }
}

/// `SecItemUpdate`: the items matching a query get new attributes and, when
/// given, a new secret.
public struct UpdateRequest: Sendable, Hashable {
    /// The vault to update in.
    public var vault: VaultID
    /// Which items to update.
    public var query: Query
    /// Attributes to set on every match.
    public var attributes: AttributeMap
    /// A new secret, when it changes.
    public var secret: [UInt8]?

    /// An update request from its parts.
    public init(vault: VaultID, query: Query, attributes: AttributeMap, secret: [UInt8]? = nil) {
        self.vault = vault
        self.query = query
        self.attributes = attributes
        self.secret = secret
    }
}
