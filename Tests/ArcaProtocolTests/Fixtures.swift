import ArcaProtocol

/// Representative and edge-value messages: every kind at least once, with
/// empty, maximal and non-ASCII values.
enum Fixtures {
    static let key = [UInt8](0..<32)
    static let otherKey = [UInt8](repeating: 0xA5, count: 32)
    static let salt = [UInt8](100..<116)
    static let kdf = KeyDerivationParameters(opsLimit: 3, memoryLimit: 64 << 20, salt: salt)
    static let extremeKDF = KeyDerivationParameters(
        opsLimit: .max, memoryLimit: 0, salt: [UInt8](repeating: 0xFF, count: 16))
    static let unicode = "Zürich 🔑 東京 e\u{301} \u{0}"

    static func string(_ length: Int) -> String { String(repeating: "x", count: length) }

    /// Every attribute once, each of its type, at the maximum size where sized.
    static let maximalAttributes: AttributeMap = {
        var map: AttributeMap = [:]
        for tag in AttributeTag.allCases {
            switch tag.valueType {
            case .string: map[tag] = .string(string(ProtocolLimits.maximumStringLength))
            case .bytes: map[tag] = .bytes([UInt8](repeating: 0xEE, count: ProtocolLimits.maximumBytesAttributeLength))
            case .uint32: map[tag] = .uint32(.max)
            case .bool: map[tag] = .bool(true)
            case .date: map[tag] = .date(microsecondsSinceEpoch: .min)
            case .itemClass: map[tag] = .itemClass(.internetPassword)
            case .accessibility: map[tag] = .accessibility(.whenPasscodeSetThisDeviceOnly)
            }
        }
        return map
    }()

    static let webAttributes: AttributeMap = [
        .service: .string("web"), .account: .string("alice"), .label: .string(unicode), .port: .uint32(443),
        .protocol: .string("htps"), .isInvisible: .bool(false), .accessible: .accessibility(.afterFirstUnlock),
        .creationDate: .date(microsecondsSinceEpoch: 1_764_417_600_000_000), .generic: .bytes([]),
        .description: .string(""),
    ]

    static let fullQuery = Query(
        itemClass: .internetPassword, attributes: webAttributes, persistentRef: [1, 2, 3],
        matchLimit: .count(UInt32.max), returnFlags: .all, caseInsensitive: true, synchronizableAny: true)

    static let requests: [Request] = [
        .status(uid: nil),
        .status(uid: 0),
        .kdfParameters(uid: .max),
        .unlock(uid: 1000, key: key),
        .enroll(uid: 1000, key: key, parameters: kdf),
        .enroll(uid: 0, key: otherKey, parameters: extremeKDF),
        .openSession(SessionOpening(uid: 1000, token: [9, 9], service: "login")),
        .openSession(
            SessionOpening(
                uid: 1001, token: [UInt8](repeating: 7, count: ProtocolLimits.maximumTokenLength),
                service: string(ProtocolLimits.maximumNameLength), tty: "pts/3", remoteHost: unicode,
                remoteUser: "")),
        .closeSession(uid: 1000, token: []),
        .lock(uid: 1000, classes: .whenUnlocked),
        .lock(uid: 1000, classes: []),
        .lock(uid: 1000, classes: .all),
        .lockAll,
        .unlockWithPassword(uid: 1000, password: Array("correct horse ✓".utf8)),
        .unlockWithPassword(uid: 1000, password: [UInt8](repeating: 0x61, count: ProtocolLimits.maximumPasswordLength)),
        .add(AddRequest(vault: .user(uid: 1000), itemClass: .genericPassword, attributes: [:], secret: [])),
        .add(
            AddRequest(
                vault: .system, itemClass: .internetPassword, attributes: webAttributes, secret: Array("s3cret".utf8),
                returnFlags: [.persistentRef])),
        .copyMatching(vault: .user(uid: 1000), query: Query(itemClass: .genericPassword)),
        .copyMatching(vault: .system, query: fullQuery),
        .copyMatching(
            vault: .user(uid: 0),
            query: Query(itemClass: .genericPassword, matchLimit: .all, returnFlags: [.data, .attributes])),
        .update(
            UpdateRequest(
                vault: .user(uid: 1000), query: fullQuery, attributes: [.comment: .string(unicode)], secret: nil)),
        .update(
            UpdateRequest(vault: .system, query: Query(itemClass: .genericPassword), attributes: [:], secret: [])),
        .delete(vault: .user(uid: 1000), query: Query(itemClass: .internetPassword, matchLimit: .count(1))),
        .changePassword(uid: 1000, oldKey: key, newKey: otherKey, parameters: kdf),
        .passwordReset(uid: 1000, newKey: otherKey, parameters: kdf),
        .recover(uid: 1000, recoveryKey: Array("ABCD-EFGH-IJKL".utf8), newKey: key, parameters: kdf),
        .recover(
            uid: 1000, recoveryKey: [UInt8](repeating: 0x5A, count: ProtocolLimits.maximumRecoveryKeyLength),
            newKey: key, parameters: extremeKDF),
        .rotateRecoveryKey(uid: 1000, key: key),
        .listSessions,
        .grant(
            query: Query(itemClass: .genericPassword, attributes: [.service: .string("postgresql")]),
            principals: [.user(999), .group(.max), .unit(name: "postgresql.service", credential: "db-password")]),
        .grant(query: Query(itemClass: .genericPassword), principals: []),
        .revokeGrant(query: Query(itemClass: .genericPassword, matchLimit: .all), principals: [.user(0)]),
        .revokeGrant(query: Query(itemClass: .genericPassword), principals: []),
        .listGrants,
        .addAttributeItem(
            AttributeItemAdd(
                uid: 1000, label: unicode, attributes: secretAttributes, contentType: "text/plain",
                secret: Array("pw".utf8), accessible: .whenUnlocked, replace: true)),
        .addAttributeItem(AttributeItemAdd(uid: 0, label: "", attributes: [:], contentType: "", secret: [])),
        .searchAttributeItems(uid: 1000, attributes: secretAttributes, returnSecrets: true),
        .searchAttributeItems(uid: 1000, attributes: [:], returnSecrets: false),
        .getAttributeItems(uid: 1000, references: [reference, []], returnSecrets: true),
        .getAttributeItems(uid: 1000, references: [], returnSecrets: false),
        .updateAttributeItem(
            AttributeItemUpdate(
                uid: 1000, reference: reference, label: "new", attributes: secretAttributes, contentType: "a/b",
                secret: [])),
        .updateAttributeItem(AttributeItemUpdate(uid: 1000, reference: reference)),
        .deleteAttributeItem(uid: 1000, reference: reference),
        .waitEvents(uid: 1000, after: 0, timeoutMilliseconds: 0),
        .waitEvents(uid: .max, after: .max, timeoutMilliseconds: ProtocolLimits.maximumEventWaitMilliseconds),
        .searchAttributeReferences(uid: 1000, attributes: secretAttributes),
        .searchAttributeReferences(uid: 0, attributes: [:]),
        .collectionSettings(uid: 1000, label: unicode),
        .collectionSettings(uid: 1000, label: nil),
        .loginUnlock(uid: 1000, key: key),
        .loginUnlockDerived(uid: 1000, key: key, parameters: kdf),
        .confirmCandidate(uid: 1000, candidate: otherKey, session: [9, 9]),
        .confirmCandidate(
            uid: .max, candidate: key, session: [UInt8](repeating: 3, count: ProtocolLimits.maximumTokenLength)),
        .exportItems(uid: 1000, secret: Array("correct horse battery".utf8), passphrase: true),
        .exportItems(uid: 0, secret: [], passphrase: false),
        .importItems(uid: 1000, backup: [0x41, 0x52, 0x42, 0x31, 1], secret: key),
        .importItems(uid: .max, backup: [], secret: []),
        .syncInit(uid: 1000),
        .syncJoin(uid: 1000, approver: otherKey),
        .syncApprove(uid: 1000, device: key, shortAuthenticationString: nil),
        .syncApprove(uid: .max, device: otherKey, shortAuthenticationString: "042917"),
        .syncPull(uid: 1000, after: 0),
        .syncPull(uid: 1000, after: .max),
        .syncPush(uid: 1000, files: []),
        .syncPush(
            uid: 1000,
            files: [
                SyncFile(kind: .record, author: key, bytes: [0x41, 0x52, 0x53, 0x31]),
                SyncFile(kind: .head, author: otherKey, bytes: []),
                SyncFile(kind: .approval, author: key, bytes: [0xFF]),
            ]),
        .syncRemove(uid: 1000, device: otherKey),
        .syncStatus(uid: 1000),
        .syncConflicts(uid: 0),
        .syncResolve(uid: 1000, item: reference, keep: key),
        .syncRecover(
            uid: 1000, files: [SyncFile(kind: .approval, author: key, bytes: Array("ARK1".utf8))],
            secret: Array("ABCD-EFGH".utf8)),
        .syncRecover(uid: .max, files: [], secret: []),
        .stageExport(uid: 1000, secret: Array("correct horse battery".utf8), passphrase: true),
        .stageExport(uid: 0, secret: [], passphrase: false),
        .readExport(uid: 1000, offset: 0),
        .readExport(uid: .max, offset: ProtocolLimits.maximumStagedBackupLength),
        .stageImport(uid: 1000, total: 5, offset: 0, chunk: [0x41, 0x52, 0x42, 0x31, 1]),
        .stageImport(uid: 1000, total: ProtocolLimits.maximumStagedBackupLength, offset: 1 << 20, chunk: []),
        .importStaged(uid: 1000, secret: key),
        .importStaged(uid: .max, secret: []),
    ]

    static let reference = [UInt8](0..<16)
    static let secretAttributes: SecretAttributes = [
        "xdg:schema": "org.example.Password", "user": unicode, " ": "", "punct": "a=b;c,\"d'\\",
    ]

    static let replies: [Reply] = [
        .ok,
        .error(status: .itemNotFound, message: "not found"),
        .error(status: .param, message: ""),
        .error(status: .interactionNotAllowed, message: string(ProtocolLimits.maximumErrorMessageLength)),
        .error(status: .missingEntitlement, message: unicode),
        .status(
            VaultStatus(
                uid: 1000, hasVault: true, unlocked: .all, sessionCount: 2, passwordOutOfSync: false,
                itemsNotInKernel: 0, hasRecoveryKey: true, lockIncomplete: .whenUnlocked)),
        .status(
            VaultStatus(
                uid: .max, hasVault: false, unlocked: [], sessionCount: .max, passwordOutOfSync: true,
                itemsNotInKernel: .max)),
        .kdfParameters(kdf),
        .kdfParameters(nil),
        .items([]),
        .items([
            ResultItem(attributes: webAttributes, data: Array("s3cret".utf8), persistentRef: [0xAB, 0xCD]),
            ResultItem(),
            ResultItem(attributes: [:], data: [], persistentRef: []),
        ]),
        .recoveryKey(Array("ABCD-EFGH-IJKL-MNOP".utf8)),
        .recoveryKey([]),
        .sessions([]),
        .sessions([
            SessionInfo(
                id: 1, uid: 1000, service: "sshd", tty: "ssh", remoteHost: "192.0.2.1", openedAt: 0, locked: false),
            SessionInfo(
                id: .max, uid: 0, service: unicode, tty: nil, remoteHost: nil, remoteUser: "root", openedAt: .min,
                locked: true),
        ]),
        .grants([]),
        .grants([
            GrantEntry(service: "postgresql", account: "postgres", label: nil, principals: [.user(999)]),
            GrantEntry(
                service: nil, account: nil, label: unicode,
                principals: [.group(0), .unit(name: unicode, credential: ""), .user(.max)]),
        ]),
        .attributeItems(AttributeItemList(items: [], locked: [])),
        .attributeItems(
            AttributeItemList(
                items: [
                    AttributeItemInfo(
                        reference: reference, label: unicode, attributes: secretAttributes, contentType: "text/plain",
                        created: 1_764_417_600_000_000, modified: .max, accessible: .afterFirstUnlock,
                        secret: Array("pw".utf8)),
                    AttributeItemInfo(
                        reference: [], label: "", attributes: [:], contentType: "", created: .min, modified: 0,
                        accessible: .whenUnlocked),
                ], locked: [reference, []])),
        .events(EventBatch(next: 0, missed: true, events: [])),
        .events(
            EventBatch(
                next: .max, missed: false,
                events: [
                    .lockChanged(unlocked: .all), .lockChanged(unlocked: []), .itemAdded(reference: reference),
                    .itemChanged(reference: []), .itemDeleted(reference: reference), .itemsChanged, .syncChanged,
                ])),
        .candidate(token: key),
        .staleParameters(kdf),
        .attributeReferences(AttributeReferenceList(unlocked: [], locked: [])),
        .attributeReferences(AttributeReferenceList(unlocked: [reference, []], locked: [reference])),
        .collectionSettings(CollectionSettings(label: unicode, accessible: .whenUnlocked)),
        .collectionSettings(CollectionSettings(label: "", accessible: .afterFirstUnlockThisDeviceOnly)),
        .backup([0x41, 0x52, 0x42, 0x31, 2, 0xFF]),
        .backup([]),
        .backupStaged(length: 0),
        .backupStaged(length: ProtocolLimits.maximumStagedBackupLength),
        .backupChunk([0x41, 0x52, 0x42, 0x31, 2]),
        .backupChunk([]),
        .backupReceived(length: 1 << 20),
        .importSummary(added: 3, replaced: 1, unchanged: .max),
        .syncDevice(id: [UInt8](repeating: 0xA5, count: 32)),
        .syncApproval(approval: [], shortAuthenticationString: "000123"),
        .syncApproval(approval: [0x41, 0x52, 0x41, 0x31, 9], shortAuthenticationString: unicode),
        .syncOutbox(SyncOutbox(device: key, records: [], head: [], approvals: [], more: false)),
        .syncOutbox(
            SyncOutbox(
                device: otherKey,
                records: [SyncOutboxRecord(seq: 1, bytes: [1, 2]), SyncOutboxRecord(seq: .max, bytes: [])],
                head: [0x41, 0x52, 0x48, 0x31], approvals: [SyncOutboxApproval(device: key, bytes: [7])], more: true)),
        .syncPushResult([]),
        .syncPushResult([
            SyncFileOutcome(code: .applied), SyncFileOutcome(code: .duplicate), SyncFileOutcome(code: .queued),
            SyncFileOutcome(code: .refused, message: unicode),
        ]),
        .syncRemoval(SyncRemoval(epoch: 1, seenItems: ["web/alice", unicode])),
        .syncRemoval(SyncRemoval(epoch: .max, seenItems: [])),
        .syncStatus(
            SyncStatus(
                device: key, awaitingApprovalFrom: otherKey, epoch: 0, seq: 0, devices: [], queued: 0, conflicts: 0,
                reports: [])),
        .syncStatus(
            SyncStatus(
                device: key, awaitingApprovalFrom: nil, epoch: 3, seq: 17,
                devices: [
                    SyncDeviceStatus(id: key, removedAfter: nil, applied: 17, missing: 0),
                    SyncDeviceStatus(id: otherKey, removedAfter: 4, applied: 4, missing: .max),
                ],
                queued: 2, conflicts: 1, reports: ["record 5 from removed device a5a5 refused", unicode])),
        .syncConflicts([]),
        .syncConflicts([
            SyncConflict(
                item: reference,
                versions: [
                    SyncVersion(
                        hash: key, author: otherKey, clockMillis: 1_700_000_000_000, winner: true, deleted: false,
                        attributes: [
                            .itemClass: .itemClass(.genericPassword), .service: .string("web"),
                            .account: .string(unicode),
                        ]),
                    SyncVersion(
                        hash: otherKey, author: key, clockMillis: 0, winner: false, deleted: true, attributes: [:]),
                ])
        ]),
    ]

    /// Messages at the size limits (kept apart: large, so not used for mutation).
    static let largeRequests: [Request] = [
        .add(
            AddRequest(
                vault: .user(uid: 1000), itemClass: .genericPassword, attributes: maximalAttributes,
                secret: [UInt8](repeating: 0xC3, count: ProtocolLimits.maximumSecretLength), returnFlags: .all)),
        .copyMatching(
            vault: .user(uid: 1000), query: Query(itemClass: .genericPassword, attributes: maximalAttributes)),
        .stageImport(
            uid: 1000, total: 3 << 20, offset: 1 << 20,
            chunk: [UInt8](repeating: 0x5A, count: ProtocolLimits.maximumBackupChunkLength)),
    ]

    static let largeReplies: [Reply] = [
        .items([
            ResultItem(
                attributes: maximalAttributes,
                data: [UInt8](repeating: 0x11, count: ProtocolLimits.maximumSecretLength),
                persistentRef: [UInt8](repeating: 0x22, count: ProtocolLimits.maximumPersistentRefLength))
        ]),
        .items([ResultItem](repeating: ResultItem(), count: ProtocolLimits.maximumListCount)),
        .backupChunk([UInt8](repeating: 0xA5, count: ProtocolLimits.maximumBackupChunkLength)),
    ]
}

/// Test helpers for building frames by hand.
enum Bytes {
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    static func string(_ s: String) -> [UInt8] { be32(UInt32(s.utf8.count)) + Array(s.utf8) }
    static func field(_ b: [UInt8]) -> [UInt8] { be32(UInt32(b.count)) + b }

    /// A frame with a hand-made header and body.
    static func frame(kind: UInt16, body: [UInt8], requestID: UInt32 = 1, version: UInt16 = 1) -> [UInt8] {
        Frame.magic + be16(version) + be16(kind) + be32(requestID) + be32(UInt32(body.count)) + body
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    static func fromHex(_ text: String) -> [UInt8] {
        let clean = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: clean.count, by: 2).compactMap { UInt8(String(clean[$0...$0 + 1]), radix: 16) }
    }
}

/// Decodes a whole buffer as exactly one request, or returns the error.
func decodeRequest(_ bytes: [UInt8]) -> Result<Request, ProtocolError>? {
    switch Frame.decode(bytes, as: Request.self) {
    case .complete(let frame): return frame.length == bytes.count ? .success(frame.message) : nil
    case .invalid(let error): return .failure(error)
    case .needMore: return nil
    }
}

/// Decodes a whole buffer as exactly one reply, or returns the error.
func decodeReply(_ bytes: [UInt8]) -> Result<Reply, ProtocolError>? {
    switch Frame.decode(bytes, as: Reply.self) {
    case .complete(let frame): return frame.length == bytes.count ? .success(frame.message) : nil
    case .invalid(let error): return .failure(error)
    case .needMore: return nil
    }
}
