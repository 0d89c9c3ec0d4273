extension Request {
    /// Writes the body of this request (the header is `Frame`'s).
    func encodeBody(_ w: inout WireWriter) throws(ProtocolError) {
        switch self {
        case .status(let uid): try w.optional(uid) { w, uid in w.u32(uid) }
        case .kdfParameters(let uid): w.u32(uid)
        case .unlock(let uid, let key):
            w.u32(uid)
            try w.key(key, field: "key")
        case .enroll(let uid, let key, let parameters):
            w.u32(uid)
            try w.key(key, field: "key")
            try w.kdf(parameters)
        case .openSession(let s):
            w.u32(s.uid)
            try w.bytes(s.token, field: "token", limit: ProtocolLimits.maximumTokenLength)
            try w.string(s.service, field: "service", limit: ProtocolLimits.maximumNameLength)
            try w.optionalName(s.tty, field: "tty")
            try w.optionalName(s.remoteHost, field: "remoteHost")
            try w.optionalName(s.remoteUser, field: "remoteUser")
        case .closeSession(let uid, let token):
            w.u32(uid)
            try w.bytes(token, field: "token", limit: ProtocolLimits.maximumTokenLength)
        case .lock(let uid, let classes):
            w.u32(uid)
            try w.lockClasses(classes)
        case .lockAll, .listSessions, .listGrants: break
        case .grant(let query, let principals), .revokeGrant(let query, let principals):
            try w.query(query)
            try w.principals(principals)
        case .unlockWithPassword(let uid, let password):
            w.u32(uid)
            try w.bytes(password, field: "password", limit: ProtocolLimits.maximumPasswordLength)
        case .add(let add):
            w.vault(add.vault)
            w.u8(add.itemClass.rawValue)
            try w.attributes(add.attributes)
            try w.bytes(add.secret, field: "secret", limit: ProtocolLimits.maximumSecretLength)
            try w.returnFlags(add.returnFlags)
        case .copyMatching(let vault, let query), .delete(let vault, let query):
            w.vault(vault)
            try w.query(query)
        case .update(let update):
            w.vault(update.vault)
            try w.query(update.query)
            try w.attributes(update.attributes)
            try w.optional(update.secret) { w, secret throws(ProtocolError) in
                try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumSecretLength)
            }
        case .changePassword(let uid, let oldKey, let newKey, let parameters):
            w.u32(uid)
            try w.key(oldKey, field: "oldKey")
            try w.key(newKey, field: "newKey")
            try w.kdf(parameters)
        case .passwordReset(let uid, let newKey, let parameters):
            w.u32(uid)
            try w.key(newKey, field: "newKey")
            try w.kdf(parameters)
        case .recover(let uid, let recoveryKey, let newKey, let parameters):
            w.u32(uid)
            try w.bytes(recoveryKey, field: "recoveryKey", limit: ProtocolLimits.maximumRecoveryKeyLength)
            try w.key(newKey, field: "newKey")
            try w.kdf(parameters)
        case .loginUnlockDerived(let uid, let key, let parameters):
            w.u32(uid)
            try w.key(key, field: "key")
            try w.kdf(parameters)
        case .rotateRecoveryKey(let uid, let key), .loginUnlock(let uid, let key):
            w.u32(uid)
            try w.key(key, field: "key")
        case .addAttributeItem(let add):
            w.u32(add.uid)
            try w.string(add.label, field: "label", limit: ProtocolLimits.maximumStringLength)
            try w.secretAttributes(add.attributes, field: "attributes")
            try w.string(add.contentType, field: "contentType", limit: ProtocolLimits.maximumStringLength)
            try w.bytes(add.secret, field: "secret", limit: ProtocolLimits.maximumSecretLength)
            try w.optional(add.accessible) { w, a in w.u8(a.rawValue) }
            w.bool(add.replace)
        case .searchAttributeItems(let uid, let attributes, let returnSecrets):
            w.u32(uid)
            try w.secretAttributes(attributes, field: "attributes")
            w.bool(returnSecrets)
        case .getAttributeItems(let uid, let references, let returnSecrets):
            w.u32(uid)
            try w.list(references, field: "references", limit: ProtocolLimits.maximumReferenceCount) {
                w, ref throws(ProtocolError) in try w.reference(ref)
            }
            w.bool(returnSecrets)
        case .updateAttributeItem(let u):
            w.u32(u.uid)
            try w.reference(u.reference)
            try w.optionalString(u.label, field: "label")
            try w.optional(u.attributes) { w, d throws(ProtocolError) in try w.secretAttributes(d, field: "attributes")
            }
            try w.optionalString(u.contentType, field: "contentType")
            try w.optional(u.secret) { w, s throws(ProtocolError) in
                try w.bytes(s, field: "secret", limit: ProtocolLimits.maximumSecretLength)
            }
        case .deleteAttributeItem(let uid, let reference):
            w.u32(uid)
            try w.reference(reference)
        case .waitEvents(let uid, let after, let timeout):
            guard timeout <= ProtocolLimits.maximumEventWaitMilliseconds else {
                throw .invalidValue(field: "timeoutMilliseconds")
            }
            w.u32(uid)
            w.u64(after)
            w.u32(timeout)
        case .searchAttributeReferences(let uid, let attributes):
            w.u32(uid)
            try w.secretAttributes(attributes, field: "attributes")
        case .collectionSettings(let uid, let label):
            w.u32(uid)
            try w.optionalString(label, field: "label")
        case .confirmCandidate(let uid, let candidate, let session):
            w.u32(uid)
            try w.fixed(candidate, field: "candidate", length: ProtocolLimits.candidateTokenLength)
            try w.bytes(session, field: "session", limit: ProtocolLimits.maximumTokenLength)
        case .exportItems(let uid, let secret, let passphrase):
            w.u32(uid)
            try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumPasswordLength)
            w.bool(passphrase)
        case .importItems(let uid, let backup, let secret):
            w.u32(uid)
            try w.bytes(backup, field: "backup", limit: ProtocolLimits.maximumBackupLength)
            try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumPasswordLength)
        case .syncInit(let uid), .syncConflicts(let uid): w.u32(uid)
        case .syncStatus(let uid, let detailed):
            w.u32(uid)
            if detailed { w.u8(1) }
        case .syncJoin(let uid, let device), .syncRemove(let uid, let device):
            w.u32(uid)
            try w.syncID(device, field: "device")
        case .syncApprove(let uid, let device, let sas):
            w.u32(uid)
            try w.syncID(device, field: "device")
            try w.optional(sas) { w, sas throws(ProtocolError) in
                try w.string(sas, field: "shortAuthenticationString", limit: ProtocolLimits.maximumNameLength)
            }
        case .syncPull(let uid, let after):
            w.u32(uid)
            w.u64(after)
        case .syncPush(let uid, let files):
            w.u32(uid)
            try w.syncFiles(files)
        case .syncResolve(let uid, let item, let keep):
            w.u32(uid)
            try w.fixed(item, field: "item", length: ProtocolLimits.syncItemRefLength)
            try w.fixed(keep, field: "version", length: ProtocolLimits.syncHashLength)
        case .syncRecover(let uid, let files, let secret):
            w.u32(uid)
            try w.syncFiles(files)
            try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumPasswordLength)
        case .stageExport(let uid, let secret, let passphrase):
            w.u32(uid)
            try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumPasswordLength)
            w.bool(passphrase)
        case .readExport(let uid, let offset):
            guard offset <= ProtocolLimits.maximumStagedBackupLength else { throw .invalidValue(field: "offset") }
            w.u32(uid)
            w.u64(offset)
        case .stageImport(let uid, let total, let offset, let chunk):
            try Self.checkStagedRange(total: total, offset: offset, count: chunk.count)
            w.u32(uid)
            w.u64(total)
            w.u64(offset)
            try w.bytes(chunk, field: "chunk", limit: ProtocolLimits.maximumBackupChunkLength)
        case .importStaged(let uid, let secret):
            w.u32(uid)
            try w.bytes(secret, field: "secret", limit: ProtocolLimits.maximumPasswordLength)
        }
    }

    /// A staged piece lies inside its backup, which is not empty and not past the offsets' range:
    /// both sides check it, so a frame one side writes the other accepts.
    static func checkStagedRange(total: UInt64, offset: UInt64, count: Int) throws(ProtocolError) {
        guard total > 0, total <= ProtocolLimits.maximumStagedBackupLength else { throw .invalidValue(field: "total") }
        guard offset < total, UInt64(count) <= total - offset else { throw .invalidValue(field: "offset") }
    }

    /// Reads the body of a request of `kind`; the caller checks that nothing trails.
    static func decodeBody(kind: MessageKind, _ r: inout WireReader) throws(ProtocolError) -> Request {
        switch kind {
        case .status: return .status(uid: try r.optional(field: "uid") { r throws(ProtocolError) in try r.u32() })
        case .kdfParameters: return .kdfParameters(uid: try r.u32())
        case .unlock: return .unlock(uid: try r.u32(), key: try r.key(field: "key"))
        case .enroll: return .enroll(uid: try r.u32(), key: try r.key(field: "key"), parameters: try r.kdf())
        case .openSession:
            return .openSession(
                SessionOpening(
                    uid: try r.u32(), token: try r.bytes(field: "token", limit: ProtocolLimits.maximumTokenLength),
                    service: try r.string(field: "service", limit: ProtocolLimits.maximumNameLength),
                    tty: try r.optionalName(field: "tty"), remoteHost: try r.optionalName(field: "remoteHost"),
                    remoteUser: try r.optionalName(field: "remoteUser")))
        case .closeSession:
            return .closeSession(
                uid: try r.u32(), token: try r.bytes(field: "token", limit: ProtocolLimits.maximumTokenLength))
        case .lock: return .lock(uid: try r.u32(), classes: try r.lockClasses())
        case .lockAll: return .lockAll
        case .listSessions: return .listSessions
        case .grant: return .grant(query: try r.query(), principals: try r.principals())
        case .revokeGrant: return .revokeGrant(query: try r.query(), principals: try r.principals())
        case .listGrants: return .listGrants
        case .unlockWithPassword:
            return .unlockWithPassword(
                uid: try r.u32(), password: try r.bytes(field: "password", limit: ProtocolLimits.maximumPasswordLength))
        case .add:
            return .add(
                AddRequest(
                    vault: try r.vault(), itemClass: try r.itemClass(), attributes: try r.attributes(),
                    secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumSecretLength),
                    returnFlags: try r.returnFlags()))
        case .copyMatching: return .copyMatching(vault: try r.vault(), query: try r.query())
        case .delete: return .delete(vault: try r.vault(), query: try r.query())
        case .update:
            return .update(
                UpdateRequest(
                    vault: try r.vault(), query: try r.query(), attributes: try r.attributes(),
                    secret: try r.optional(field: "secret") { r throws(ProtocolError) in
                        try r.bytes(field: "secret", limit: ProtocolLimits.maximumSecretLength)
                    }))
        case .changePassword:
            return .changePassword(
                uid: try r.u32(), oldKey: try r.key(field: "oldKey"), newKey: try r.key(field: "newKey"),
                parameters: try r.kdf())
        case .passwordReset:
            return .passwordReset(uid: try r.u32(), newKey: try r.key(field: "newKey"), parameters: try r.kdf())
        case .recover:
            return .recover(
                uid: try r.u32(),
                recoveryKey: try r.bytes(field: "recoveryKey", limit: ProtocolLimits.maximumRecoveryKeyLength),
                newKey: try r.key(field: "newKey"), parameters: try r.kdf())
        case .rotateRecoveryKey: return .rotateRecoveryKey(uid: try r.u32(), key: try r.key(field: "key"))
        case .addAttributeItem:
            return .addAttributeItem(
                AttributeItemAdd(
                    uid: try r.u32(), label: try r.string(field: "label", limit: ProtocolLimits.maximumStringLength),
                    attributes: try r.secretAttributes(field: "attributes"),
                    contentType: try r.string(field: "contentType", limit: ProtocolLimits.maximumStringLength),
                    secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumSecretLength),
                    accessible: try r.optional(field: "accessible") { r throws(ProtocolError) in try r.accessibility()
                    },
                    replace: try r.bool(field: "replace")))
        case .searchAttributeItems:
            return .searchAttributeItems(
                uid: try r.u32(), attributes: try r.secretAttributes(field: "attributes"),
                returnSecrets: try r.bool(field: "returnSecrets"))
        case .getAttributeItems:
            return .getAttributeItems(
                uid: try r.u32(),
                references: try r.list(field: "references", limit: ProtocolLimits.maximumReferenceCount) {
                    r throws(ProtocolError) in try r.reference()
                },
                returnSecrets: try r.bool(field: "returnSecrets"))
        case .updateAttributeItem:
            return .updateAttributeItem(
                AttributeItemUpdate(
                    uid: try r.u32(), reference: try r.reference(), label: try r.optionalString(field: "label"),
                    attributes: try r.optional(field: "attributes") { r throws(ProtocolError) in
                        try r.secretAttributes(field: "attributes")
                    },
                    contentType: try r.optionalString(field: "contentType"),
                    secret: try r.optional(field: "secret") { r throws(ProtocolError) in
                        try r.bytes(field: "secret", limit: ProtocolLimits.maximumSecretLength)
                    }))
        case .deleteAttributeItem: return .deleteAttributeItem(uid: try r.u32(), reference: try r.reference())
        case .waitEvents:
            let uid = try r.u32()
            let after = try r.u64()
            let timeout = try r.u32()
            guard timeout <= ProtocolLimits.maximumEventWaitMilliseconds else {
                throw .invalidValue(field: "timeoutMilliseconds")
            }
            return .waitEvents(uid: uid, after: after, timeoutMilliseconds: timeout)
        case .searchAttributeReferences:
            return .searchAttributeReferences(uid: try r.u32(), attributes: try r.secretAttributes(field: "attributes"))
        case .collectionSettings:
            return .collectionSettings(uid: try r.u32(), label: try r.optionalString(field: "label"))
        case .loginUnlock: return .loginUnlock(uid: try r.u32(), key: try r.key(field: "key"))
        case .loginUnlockDerived:
            return .loginUnlockDerived(uid: try r.u32(), key: try r.key(field: "key"), parameters: try r.kdf())
        case .confirmCandidate:
            return .confirmCandidate(
                uid: try r.u32(),
                candidate: try r.fixed(field: "candidate", length: ProtocolLimits.candidateTokenLength),
                session: try r.bytes(field: "session", limit: ProtocolLimits.maximumTokenLength))
        case .exportItems:
            return .exportItems(
                uid: try r.u32(), secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumPasswordLength),
                passphrase: try r.bool(field: "passphrase"))
        case .importItems:
            return .importItems(
                uid: try r.u32(), backup: try r.bytes(field: "backup", limit: ProtocolLimits.maximumBackupLength),
                secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumPasswordLength))
        case .syncInit: return .syncInit(uid: try r.u32())
        case .syncJoin: return .syncJoin(uid: try r.u32(), approver: try r.syncID(field: "device"))
        case .syncApprove:
            return .syncApprove(
                uid: try r.u32(), device: try r.syncID(field: "device"),
                shortAuthenticationString: try r.optional(field: "shortAuthenticationString") {
                    r throws(ProtocolError) in
                    try r.string(field: "shortAuthenticationString", limit: ProtocolLimits.maximumNameLength)
                })
        case .syncPull: return .syncPull(uid: try r.u32(), after: try r.u64())
        case .syncPush: return .syncPush(uid: try r.u32(), files: try r.syncFiles())
        case .syncRemove: return .syncRemove(uid: try r.u32(), device: try r.syncID(field: "device"))
        case .syncStatus:
            let uid = try r.u32()
            guard r.remaining > 0 else { return .syncStatus(uid: uid) }
            let flags = try r.u8()
            guard flags == 1 else { throw .unknownTag(field: "status flags", value: UInt32(flags)) }
            return .syncStatus(uid: uid, detailed: true)
        case .syncConflicts: return .syncConflicts(uid: try r.u32())
        case .syncResolve:
            return .syncResolve(
                uid: try r.u32(), item: try r.fixed(field: "item", length: ProtocolLimits.syncItemRefLength),
                keep: try r.fixed(field: "version", length: ProtocolLimits.syncHashLength))
        case .syncRecover:
            return .syncRecover(
                uid: try r.u32(), files: try r.syncFiles(),
                secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumPasswordLength))
        case .stageExport:
            return .stageExport(
                uid: try r.u32(), secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumPasswordLength),
                passphrase: try r.bool(field: "passphrase"))
        case .readExport:
            let uid = try r.u32()
            let offset = try r.u64()
            guard offset <= ProtocolLimits.maximumStagedBackupLength else { throw .invalidValue(field: "offset") }
            return .readExport(uid: uid, offset: offset)
        case .stageImport:
            let uid = try r.u32()
            let total = try r.u64()
            let offset = try r.u64()
            let chunk = try r.bytes(field: "chunk", limit: ProtocolLimits.maximumBackupChunkLength)
            try checkStagedRange(total: total, offset: offset, count: chunk.count)
            return .stageImport(uid: uid, total: total, offset: offset, chunk: chunk)
        case .importStaged:
            return .importStaged(
                uid: try r.u32(), secret: try r.bytes(field: "secret", limit: ProtocolLimits.maximumPasswordLength))
        case .ok, .error, .statusReply, .kdfParametersReply, .items, .recoveryKey, .sessions, .grants, .candidate,
            .staleParameters,
            .attributeItems, .events, .attributeReferences, .collectionSettingsReply, .backup, .importSummary,
            .syncDevice, .syncApproval, .syncOutbox, .syncPushResult, .syncRemoval, .syncStatusReply,
            .syncConflictsReply, .backupStaged, .backupChunk, .backupReceived:
            throw .unexpectedKind(kind)
        }
    }
}

extension WireWriter {
    /// An optional name (tty, remote host or user).
    mutating func optionalName(_ name: String?, field: String) throws(ProtocolError) {
        try optional(name) { w, name throws(ProtocolError) in
            try w.string(name, field: field, limit: ProtocolLimits.maximumNameLength)
        }
    }
}

extension WireReader {
    /// An optional name (tty, remote host or user).
    mutating func optionalName(field: String) throws(ProtocolError) -> String? {
        try optional(field: field) { r throws(ProtocolError) in
            try r.string(field: field, limit: ProtocolLimits.maximumNameLength)
        }
    }
}
