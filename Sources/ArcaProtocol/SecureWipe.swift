/// Zeroing of the byte arrays the codec reads from and produces.
///
/// Who wipes what:
/// - the **receive buffer** a frame was decoded from: the caller, with
///   ``removeFirst(_:from:)`` after each frame (or ``zero(_:)`` at the end);
/// - the **frame** that ``Frame/encode(_:requestID:)-(Request,_)`` returned,
///   once it is sent: the caller, with ``zero(_:)``;
/// - **secret fields of a decoded message** (keys, passwords, tokens, item
///   data, recovery keys): moved at once into `SecretBytes(consuming:)`, which
///   zeroes the array, or zeroed with ``Request/wipeSecrets()`` /
///   ``Reply/wipeSecrets()``.
///
/// The codec itself keeps no copies: it reads secrets straight from the
/// caller's buffer into the message, and writes them straight into a frame
/// reserved at its final size, so no intermediate buffer is ever freed with a
/// secret in it.
public enum SecureWipe {
    /// Zeroes every byte of `bytes`, its spare capacity included, keeping its
    /// count and storage. Storage shared with another array (copy-on-write)
    /// is copied first and only this array's copy is zeroed, so wipe arrays
    /// that are not shared.
    public static func zero(_ bytes: inout [UInt8]) {
        zeroSpareCapacity(&bytes)
        zeroInPlace(&bytes, 0..<bytes.count)
    }

    /// Removes the first `count` bytes of a receive buffer (a frame just
    /// decoded), zeroing them, and zeroing the stale copy of the remaining
    /// bytes that shifting them down leaves past the new end.
    public static func removeFirst(_ count: Int, from buffer: inout [UInt8]) {
        let count = min(max(count, 0), buffer.count)
        zeroInPlace(&buffer, 0..<count)
        buffer.removeFirst(count)
        zeroSpareCapacity(&buffer)
    }

    /// Zeroes the bytes between `count` and `capacity`, which may hold an
    /// older secret. Appending within capacity never reallocates, and makes
    /// them reachable.
    private static func zeroSpareCapacity(_ bytes: inout [UInt8]) {
        let count = bytes.count
        let spare = bytes.capacity - count
        guard spare > 0 else { return }
        bytes.append(contentsOf: repeatElement(0, count: spare))
        zeroInPlace(&bytes, count..<bytes.count)
        bytes.removeLast(spare)
    }

    /// Zeroes an optional byte array in place (see ``zero(_:)-([UInt8])``).
    public static func zero(_ bytes: inout [UInt8]?) {
        guard var value = bytes else { return }
        // Drop the optional's reference first so `value` is the only owner.
        bytes = nil
        zero(&value)
        bytes = value
    }
}

extension Request {
    /// Zeroes, in place, every secret field of this request: keys, password,
    /// recovery key, session and candidate tokens, item secret. Lengths and
    /// other fields stay.
    public mutating func wipeSecrets() {
        // Each case first replaces `self`, so the bound payload is the only
        // owner of its arrays and is zeroed in place rather than copied.
        switch self {
        case .status, .kdfParameters, .lock, .lockAll, .copyMatching, .delete, .listSessions, .grant, .revokeGrant,
            .listGrants, .searchAttributeItems, .getAttributeItems, .deleteAttributeItem, .waitEvents,
            .searchAttributeReferences, .collectionSettings, .syncInit, .syncJoin, .syncApprove, .syncPull, .syncPush,
            .syncRemove, .syncStatus, .syncConflicts, .syncResolve, .readExport, .stageImport:
            return
        case .addAttributeItem(var add):
            self = .lockAll
            SecureWipe.zero(&add.secret)
            self = .addAttributeItem(add)
        case .updateAttributeItem(var update):
            self = .lockAll
            SecureWipe.zero(&update.secret)
            self = .updateAttributeItem(update)
        case .unlock(let uid, var key):
            self = .lockAll
            SecureWipe.zero(&key)
            self = .unlock(uid: uid, key: key)
        case .enroll(let uid, var key, let parameters):
            self = .lockAll
            SecureWipe.zero(&key)
            self = .enroll(uid: uid, key: key, parameters: parameters)
        case .openSession(var session):
            self = .lockAll
            SecureWipe.zero(&session.token)
            self = .openSession(session)
        case .closeSession(let uid, var token):
            self = .lockAll
            SecureWipe.zero(&token)
            self = .closeSession(uid: uid, token: token)
        case .unlockWithPassword(let uid, var password):
            self = .lockAll
            SecureWipe.zero(&password)
            self = .unlockWithPassword(uid: uid, password: password)
        case .add(var add):
            self = .lockAll
            SecureWipe.zero(&add.secret)
            self = .add(add)
        case .update(var update):
            self = .lockAll
            SecureWipe.zero(&update.secret)
            self = .update(update)
        case .changePassword(let uid, var oldKey, var newKey, let parameters):
            self = .lockAll
            SecureWipe.zero(&oldKey)
            SecureWipe.zero(&newKey)
            self = .changePassword(uid: uid, oldKey: oldKey, newKey: newKey, parameters: parameters)
        case .passwordReset(let uid, var newKey, let parameters):
            self = .lockAll
            SecureWipe.zero(&newKey)
            self = .passwordReset(uid: uid, newKey: newKey, parameters: parameters)
        case .recover(let uid, var recoveryKey, var newKey, let parameters):
            self = .lockAll
            SecureWipe.zero(&recoveryKey)
            SecureWipe.zero(&newKey)
            self = .recover(uid: uid, recoveryKey: recoveryKey, newKey: newKey, parameters: parameters)
        case .rotateRecoveryKey(let uid, var key):
            self = .lockAll
            SecureWipe.zero(&key)
            self = .rotateRecoveryKey(uid: uid, key: key)
        case .loginUnlock(let uid, var key):
            self = .lockAll
            SecureWipe.zero(&key)
            self = .loginUnlock(uid: uid, key: key)
        case .loginUnlockDerived(let uid, var key, let parameters):
            self = .lockAll
            SecureWipe.zero(&key)
            self = .loginUnlockDerived(uid: uid, key: key, parameters: parameters)
        case .confirmCandidate(let uid, var candidate, var session):
            self = .lockAll
            SecureWipe.zero(&candidate)
            SecureWipe.zero(&session)
            self = .confirmCandidate(uid: uid, candidate: candidate, session: session)
        case .exportItems(let uid, var secret, let passphrase):
            self = .lockAll
            SecureWipe.zero(&secret)
            self = .exportItems(uid: uid, secret: secret, passphrase: passphrase)
        case .importItems(let uid, let backup, var secret):
            self = .lockAll
            SecureWipe.zero(&secret)
            self = .importItems(uid: uid, backup: backup, secret: secret)
        case .syncRecover(let uid, let files, var secret):
            self = .lockAll
            SecureWipe.zero(&secret)
            self = .syncRecover(uid: uid, files: files, secret: secret)
        case .stageExport(let uid, var secret, let passphrase):
            self = .lockAll
            SecureWipe.zero(&secret)
            self = .stageExport(uid: uid, secret: secret, passphrase: passphrase)
        case .importStaged(let uid, var secret):
            self = .lockAll
            SecureWipe.zero(&secret)
            self = .importStaged(uid: uid, secret: secret)
        }
    }
}

extension Reply {
    /// Zeroes, in place, every secret field of this reply: item data, recovery
    /// keys and candidate tokens.
    public mutating func wipeSecrets() {
        switch self {
        case .ok, .error, .status, .kdfParameters, .staleParameters, .sessions, .grants, .events, .attributeReferences,
            .collectionSettings, .backup, .importSummary, .syncDevice, .syncApproval, .syncOutbox, .syncPushResult,
            .syncRemoval, .syncStatus, .syncConflicts, .backupStaged, .backupChunk, .backupReceived:
            return
        case .attributeItems(var list):
            self = .ok
            for index in list.items.indices { SecureWipe.zero(&list.items[index].secret) }
            self = .attributeItems(list)
        case .items(var items):
            self = .ok
            for index in items.indices { SecureWipe.zero(&items[index].data) }
            self = .items(items)
        case .recoveryKey(var key):
            self = .ok
            SecureWipe.zero(&key)
            self = .recoveryKey(key)
        case .candidate(var token):
            self = .ok
            SecureWipe.zero(&token)
            self = .candidate(token: token)
        }
    }
}
