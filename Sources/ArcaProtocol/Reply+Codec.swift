extension Reply {
    /// Writes the body of this reply (the header is `Frame`'s).
    func encodeBody(_ w: inout WireWriter) throws(ProtocolError) {
        switch self {
        case .ok: break
        case .error(let status, let message):
            guard status != .success else { throw .invalidValue(field: "status") }
            w.u32(UInt32(bitPattern: status.rawValue))
            try w.string(message, field: "message", limit: ProtocolLimits.maximumErrorMessageLength)
        case .status(let s):
            w.u32(s.uid)
            w.bool(s.hasVault)
            try w.lockClasses(s.unlocked)
            w.u32(s.sessionCount)
            w.bool(s.passwordOutOfSync)
            w.u32(s.itemsNotInKernel)
            w.bool(s.hasRecoveryKey)
            try w.lockClasses(s.lockIncomplete)
        case .staleParameters(let parameters):
            try w.kdf(parameters)
        case .kdfParameters(let parameters):
            try w.optional(parameters) { w, p throws(ProtocolError) in try w.kdf(p) }
        case .items(let items):
            try w.list(items, field: "items", limit: ProtocolLimits.maximumListCount) { w, item throws(ProtocolError) in
                try w.attributes(item.attributes)
                try w.optional(item.data) { w, data throws(ProtocolError) in
                    try w.bytes(data, field: "data", limit: ProtocolLimits.maximumSecretLength)
                }
                try w.optional(item.persistentRef) { w, ref throws(ProtocolError) in
                    try w.bytes(ref, field: "persistentRef", limit: ProtocolLimits.maximumPersistentRefLength)
                }
            }
        case .recoveryKey(let key):
            try w.bytes(key, field: "recoveryKey", limit: ProtocolLimits.maximumRecoveryKeyLength)
        case .sessions(let sessions):
            try w.list(sessions, field: "sessions", limit: ProtocolLimits.maximumListCount) {
                w, s throws(ProtocolError) in
                w.u64(s.id)
                w.u32(s.uid)
                try w.string(s.service, field: "service", limit: ProtocolLimits.maximumNameLength)
                try w.optionalName(s.tty, field: "tty")
                try w.optionalName(s.remoteHost, field: "remoteHost")
                try w.optionalName(s.remoteUser, field: "remoteUser")
                w.i64(s.openedAt)
                w.bool(s.locked)
            }
        case .candidate(let token):
            try w.fixed(token, field: "candidate", length: ProtocolLimits.candidateTokenLength)
        case .grants(let entries):
            try w.list(entries, field: "grants", limit: ProtocolLimits.maximumListCount) { w, e throws(ProtocolError) in
                try w.optionalString(e.service, field: "service")
                try w.optionalString(e.account, field: "account")
                try w.optionalString(e.label, field: "label")
                try w.principals(e.principals)
            }
        case .attributeItems(let list): try w.attributeItemList(list)
        case .events(let batch): try w.eventBatch(batch)
        case .attributeReferences(let list): try w.attributeReferenceList(list)
        case .collectionSettings(let settings):
            try w.string(settings.label, field: "label", limit: ProtocolLimits.maximumStringLength)
            w.u8(settings.accessible.rawValue)
        case .backup(let bytes): try w.bytes(bytes, field: "backup", limit: ProtocolLimits.maximumBackupLength)
        case .importSummary(let added, let replaced, let unchanged):
            w.u32(added)
            w.u32(replaced)
            w.u32(unchanged)
        case .syncDevice(let id): try w.fixed(id, field: "device id", length: ProtocolLimits.syncDeviceIDLength)
        case .syncApproval(let approval, let sas):
            try w.syncFileBytes(approval, field: "approval")
            try w.string(sas, field: "shortAuthenticationString", limit: ProtocolLimits.maximumNameLength)
        case .syncOutbox(let outbox): try w.syncOutbox(outbox)
        case .syncPushResult(let outcomes): try w.syncOutcomes(outcomes)
        case .syncRemoval(let removal):
            w.u32(removal.epoch)
            try w.syncStrings(removal.seenItems, field: "seenItems")
        case .syncStatus(let status): try w.syncStatus(status)
        case .syncConflicts(let conflicts): try w.syncConflicts(conflicts)
        case .backupStaged(let length), .backupReceived(let length):
            guard length <= ProtocolLimits.maximumStagedBackupLength else { throw .invalidValue(field: "length") }
            w.u64(length)
        case .backupChunk(let bytes):
            try w.bytes(bytes, field: "chunk", limit: ProtocolLimits.maximumBackupChunkLength)
        }
    }

    /// Reads the body of a reply of `kind`; the caller checks that nothing trails.
    static func decodeBody(kind: MessageKind, _ r: inout WireReader) throws(ProtocolError) -> Reply {
        switch kind {
        case .ok: return .ok
        case .error:
            let code = try r.u32()
            guard let status = ArcaStatus(rawValue: Int32(bitPattern: code)) else {
                throw .unknownTag(field: "status", value: code)
            }
            guard status != .success else { throw .invalidValue(field: "status") }
            return .error(
                status: status, message: try r.string(field: "message", limit: ProtocolLimits.maximumErrorMessageLength)
            )
        case .statusReply:
            return .status(
                VaultStatus(
                    uid: try r.u32(), hasVault: try r.bool(field: "hasVault"), unlocked: try r.lockClasses(),
                    sessionCount: try r.u32(), passwordOutOfSync: try r.bool(field: "passwordOutOfSync"),
                    itemsNotInKernel: try r.u32(), hasRecoveryKey: try r.bool(field: "hasRecoveryKey"),
                    lockIncomplete: try r.lockClasses()))
        case .staleParameters: return .staleParameters(try r.kdf())
        case .kdfParametersReply:
            return .kdfParameters(try r.optional(field: "parameters") { r throws(ProtocolError) in try r.kdf() })
        case .items:
            return .items(
                try r.list(field: "items", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
                    ResultItem(
                        attributes: try r.attributes(),
                        data: try r.optional(field: "data") { r throws(ProtocolError) in
                            try r.bytes(field: "data", limit: ProtocolLimits.maximumSecretLength)
                        },
                        persistentRef: try r.optional(field: "persistentRef") { r throws(ProtocolError) in
                            try r.bytes(field: "persistentRef", limit: ProtocolLimits.maximumPersistentRefLength)
                        })
                })
        case .recoveryKey:
            return .recoveryKey(try r.bytes(field: "recoveryKey", limit: ProtocolLimits.maximumRecoveryKeyLength))
        case .sessions:
            return .sessions(
                try r.list(field: "sessions", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
                    SessionInfo(
                        id: try r.u64(), uid: try r.u32(),
                        service: try r.string(field: "service", limit: ProtocolLimits.maximumNameLength),
                        tty: try r.optionalName(field: "tty"), remoteHost: try r.optionalName(field: "remoteHost"),
                        remoteUser: try r.optionalName(field: "remoteUser"), openedAt: try r.i64(),
                        locked: try r.bool(field: "locked"))
                })
        case .grants:
            return .grants(
                try r.list(field: "grants", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
                    GrantEntry(
                        service: try r.optionalString(field: "service"),
                        account: try r.optionalString(field: "account"),
                        label: try r.optionalString(field: "label"), principals: try r.principals())
                })
        case .attributeItems: return .attributeItems(try r.attributeItemList())
        case .events: return .events(try r.eventBatch())
        case .attributeReferences: return .attributeReferences(try r.attributeReferenceList())
        case .collectionSettingsReply:
            return .collectionSettings(
                CollectionSettings(
                    label: try r.string(field: "label", limit: ProtocolLimits.maximumStringLength),
                    accessible: try r.accessibility()))
        case .candidate:
            return .candidate(token: try r.fixed(field: "candidate", length: ProtocolLimits.candidateTokenLength))
        case .backup: return .backup(try r.bytes(field: "backup", limit: ProtocolLimits.maximumBackupLength))
        case .importSummary: return .importSummary(added: try r.u32(), replaced: try r.u32(), unchanged: try r.u32())
        case .syncDevice:
            return .syncDevice(id: try r.fixed(field: "device id", length: ProtocolLimits.syncDeviceIDLength))
        case .syncApproval:
            return .syncApproval(
                approval: try r.syncFileBytes(field: "approval"),
                shortAuthenticationString: try r.string(
                    field: "shortAuthenticationString", limit: ProtocolLimits.maximumNameLength))
        case .syncOutbox: return .syncOutbox(try r.syncOutbox())
        case .syncPushResult: return .syncPushResult(try r.syncOutcomes())
        case .syncRemoval:
            return .syncRemoval(SyncRemoval(epoch: try r.u32(), seenItems: try r.syncStrings(field: "seenItems")))
        case .syncStatusReply: return .syncStatus(try r.syncStatus())
        case .syncConflictsReply: return .syncConflicts(try r.syncConflicts())
        case .backupStaged: return .backupStaged(length: try r.stagedLength())
        case .backupChunk:
            return .backupChunk(try r.bytes(field: "chunk", limit: ProtocolLimits.maximumBackupChunkLength))
        case .backupReceived: return .backupReceived(length: try r.stagedLength())
        case .status, .kdfParameters, .unlock, .enroll, .openSession, .closeSession, .lock, .lockAll,
            .unlockWithPassword, .add, .copyMatching, .update, .delete, .changePassword, .passwordReset, .recover,
            .rotateRecoveryKey, .listSessions, .grant, .revokeGrant, .listGrants, .loginUnlock, .loginUnlockDerived,
            .confirmCandidate,
            .addAttributeItem, .searchAttributeItems, .getAttributeItems, .updateAttributeItem, .deleteAttributeItem,
            .waitEvents, .searchAttributeReferences, .collectionSettings, .exportItems, .importItems,
            .syncInit, .syncJoin, .syncApprove, .syncPull, .syncPush, .syncRemove, .syncStatus, .syncConflicts,
            .syncResolve, .syncRecover, .stageExport, .readExport, .stageImport, .importStaged:
            throw .unexpectedKind(kind)
        }
    }
}

extension WireReader {
    /// A staged backup's length, within ``ProtocolLimits/maximumStagedBackupLength``.
    mutating func stagedLength() throws(ProtocolError) -> UInt64 {
        let length = try u64()
        guard length <= ProtocolLimits.maximumStagedBackupLength else { throw .invalidValue(field: "length") }
        return length
    }
}

extension WireWriter {
    /// An optional attribute string (<= 16 KiB).
    mutating func optionalString(_ value: String?, field: String) throws(ProtocolError) {
        try optional(value) { w, value throws(ProtocolError) in
            try w.string(value, field: field, limit: ProtocolLimits.maximumStringLength)
        }
    }
}

extension WireReader {
    /// An optional attribute string (<= 16 KiB).
    mutating func optionalString(field: String) throws(ProtocolError) -> String? {
        try optional(field: field) { r throws(ProtocolError) in
            try r.string(field: field, limit: ProtocolLimits.maximumStringLength)
        }
    }
}
