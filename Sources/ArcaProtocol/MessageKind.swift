/// The kind of a message: the big-endian u16 at offset 6 of every header.
/// Requests have the high bit clear, replies have it set. Raw values are
/// stable; a new message gets a new number.
public enum MessageKind: UInt16, Sendable, CaseIterable, Hashable {
    /// ``Request/status(uid:)``.
    case status = 0x0001
    /// ``Request/kdfParameters(uid:)``.
    case kdfParameters = 0x0002
    /// ``Request/unlock(uid:key:)``.
    case unlock = 0x0003
    /// ``Request/enroll(uid:key:parameters:)``.
    case enroll = 0x0004
    /// ``Request/openSession(_:)``.
    case openSession = 0x0005
    /// ``Request/closeSession(uid:token:)``.
    case closeSession = 0x0006
    /// ``Request/lock(uid:classes:)``.
    case lock = 0x0007
    /// ``Request/lockAll``.
    case lockAll = 0x0008
    /// ``Request/unlockWithPassword(uid:password:)``.
    case unlockWithPassword = 0x0009
    /// ``Request/add(_:)``.
    case add = 0x000A
    /// ``Request/copyMatching(vault:query:)``.
    case copyMatching = 0x000B
    /// ``Request/update(_:)``.
    case update = 0x000C
    /// ``Request/delete(vault:query:)``.
    case delete = 0x000D
    /// ``Request/changePassword(uid:oldKey:newKey:parameters:)``.
    case changePassword = 0x000E
    /// ``Request/passwordReset(uid:newKey:parameters:)``.
    case passwordReset = 0x000F
    /// ``Request/recover(uid:recoveryKey:newKey:parameters:)``.
    case recover = 0x0010
    /// ``Request/rotateRecoveryKey(uid:key:)``.
    case rotateRecoveryKey = 0x0011
    /// ``Request/listSessions``.
    case listSessions = 0x0012
    /// ``Request/grant(query:principals:)``.
    case grant = 0x0013
    /// ``Request/revokeGrant(query:principals:)``.
    case revokeGrant = 0x0014
    /// ``Request/listGrants``.
    case listGrants = 0x0015
    // The Secret Service requests start at 0x0020 (replies 0x8010), clear of other work.
    /// ``Request/addAttributeItem(_:)``.
    case addAttributeItem = 0x0020
    /// ``Request/searchAttributeItems(uid:attributes:returnSecrets:)``.
    case searchAttributeItems = 0x0021
    /// ``Request/getAttributeItems(uid:references:returnSecrets:)``.
    case getAttributeItems = 0x0022
    /// ``Request/updateAttributeItem(_:)``.
    case updateAttributeItem = 0x0023
    /// ``Request/deleteAttributeItem(uid:reference:)``.
    case deleteAttributeItem = 0x0024
    /// ``Request/waitEvents(uid:after:timeoutMilliseconds:)``.
    case waitEvents = 0x0025
    /// ``Request/searchAttributeReferences(uid:attributes:)``.
    case searchAttributeReferences = 0x0026
    /// ``Request/collectionSettings(uid:label:)``.
    case collectionSettings = 0x0027
    /// ``Request/loginUnlock(uid:key:)``.
    case loginUnlock = 0x0016
    /// ``Request/confirmCandidate(uid:candidate:session:)``.
    case confirmCandidate = 0x0017
    // Backup and sync (ARCHITECTURE §12): requests 0x0030-0x003F, replies 0x8020-0x802F.
    /// ``Request/exportItems(uid:secret:passphrase:)``.
    case exportItems = 0x0030
    /// ``Request/importItems(uid:backup:secret:)``.
    case importItems = 0x0031
    /// ``Request/syncInit(uid:)``.
    case syncInit = 0x0032
    /// ``Request/syncJoin(uid:approver:)``.
    case syncJoin = 0x0033
    /// ``Request/syncApprove(uid:device:shortAuthenticationString:)``.
    case syncApprove = 0x0034
    /// ``Request/syncPull(uid:after:)``.
    case syncPull = 0x0035
    /// ``Request/syncPush(uid:files:)``.
    case syncPush = 0x0036
    /// ``Request/syncRemove(uid:device:)``.
    case syncRemove = 0x0037
    /// ``Request/syncStatus(uid:)``.
    case syncStatus = 0x0038
    /// ``Request/syncConflicts(uid:)``.
    case syncConflicts = 0x0039
    /// ``Request/syncResolve(uid:item:keep:)``.
    case syncResolve = 0x003A
    /// ``Request/syncRecover(uid:files:secret:)``.
    case syncRecover = 0x003D
    /// ``Request/stageExport(uid:secret:passphrase:)``.
    case stageExport = 0x003E
    /// ``Request/readExport(uid:offset:)``.
    case readExport = 0x003F
    /// ``Request/stageImport(uid:total:offset:chunk:)``.
    case stageImport = 0x0040
    /// ``Request/importStaged(uid:secret:)``.
    case importStaged = 0x0041
    /// ``Request/loginUnlockDerived(uid:key:parameters:)``.
    case loginUnlockDerived = 0x0042

    /// ``Reply/ok``.
    case ok = 0x8000
    /// ``Reply/error(status:message:)``.
    case error = 0x8001
    /// ``Reply/status(_:)``.
    case statusReply = 0x8002
    /// ``Reply/kdfParameters(_:)``.
    case kdfParametersReply = 0x8003
    /// ``Reply/items(_:)``.
    case items = 0x8004
    /// ``Reply/recoveryKey(_:)``.
    case recoveryKey = 0x8005
    /// ``Reply/sessions(_:)``.
    case sessions = 0x8006
    /// ``Reply/grants(_:)``.
    case grants = 0x8007
    /// ``Reply/attributeItems(_:)``.
    case attributeItems = 0x8010
    /// ``Reply/events(_:)``.
    case events = 0x8011
    /// ``Reply/attributeReferences(_:)``.
    case attributeReferences = 0x8012
    /// ``Reply/collectionSettings(_:)``.
    case collectionSettingsReply = 0x8013
    /// ``Reply/candidate(token:)``.
    case candidate = 0x8008
    /// ``Reply/backup(_:)``.
    case backup = 0x8020
    /// ``Reply/importSummary(added:replaced:unchanged:)``.
    case importSummary = 0x8021
    /// ``Reply/syncDevice(id:)``.
    case syncDevice = 0x8022
    /// ``Reply/syncApproval(approval:shortAuthenticationString:)``.
    case syncApproval = 0x8023
    /// ``Reply/syncOutbox(_:)``.
    case syncOutbox = 0x8024
    /// ``Reply/syncPushResult(_:)``.
    case syncPushResult = 0x8025
    /// ``Reply/syncRemoval(_:)``.
    case syncRemoval = 0x8026
    /// ``Reply/syncStatus(_:)``.
    case syncStatusReply = 0x8027
    /// ``Reply/syncConflicts(_:)``.
    case syncConflictsReply = 0x8028
    /// ``Reply/backupStaged(length:)``.
    case backupStaged = 0x8029
    /// ``Reply/backupChunk(_:)``.
    case backupChunk = 0x802A
    /// ``Reply/backupReceived(length:)``.
    case backupReceived = 0x802B
    /// ``Reply/staleParameters(_:)``.
    case staleParameters = 0x802C

    /// Whether a client sends this kind (a daemon replies with the others).
    public var isRequest: Bool { rawValue & 0x8000 == 0 }
}
