import ArcaCrypto
import CKeyutils

/// A kernel key or keyring, by serial number, with one method per keyring call,
/// in the manner of swift-system's `FileDescriptor`. Methods throw the raw
/// `KeyringErrno`; Arca's own layout (`KeyringLayout`, `KeyringReader`) is built
/// on top and throws `KeyringError`.
public struct KeySerial: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The serial number, or a negative special id such as `KEY_SPEC_USER_KEYRING`.
    public let rawValue: Int32

    /// Wraps a serial number or special id.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's keyring (`@t`).
    public static let threadKeyring = KeySerial(rawValue: KEY_SPEC_THREAD_KEYRING)
    /// The calling process's keyring (`@p`): not inherited by fork, dropped by exec.
    public static let processKeyring = KeySerial(rawValue: KEY_SPEC_PROCESS_KEYRING)
    /// The session keyring (`@s`): inherited by children, kept across exec.
    public static let sessionKeyring = KeySerial(rawValue: KEY_SPEC_SESSION_KEYRING)
    /// The real uid's user keyring (`@u`).
    public static let userKeyring = KeySerial(rawValue: KEY_SPEC_USER_KEYRING)
    /// The real uid's user-session keyring (`@us`).
    public static let userSessionKeyring = KeySerial(rawValue: KEY_SPEC_USER_SESSION_KEYRING)

    /// The serial in hexadecimal as `/proc/keys` shows it, or the decimal special id.
    public var description: String {
        rawValue < 0 ? "\(rawValue)" : String(rawValue, radix: 16, uppercase: false)
    }

    /// Adds a key of `type` with `payload` to `keyring` (a key of the same type and
    /// description there is updated or displaced). The corresponding C function is `add_key`.
    public static func add(
        type: String, description: String, payload: SecretBytes?, to keyring: KeySerial
    ) throws(KeyringErrno) -> KeySerial {
        KeySerial(
            rawValue: try Keyctl.addKey(
                type: type, description: description, secret: payload, keyring: keyring.rawValue))
    }

    /// Finds a key by type and description in this keyring and the keyrings it links,
    /// depth first, direct links first. The corresponding C function is `keyctl_search`.
    public func search(type: String, description: String) throws(KeyringErrno) -> KeySerial {
        KeySerial(rawValue: try Keyctl.search(keyring: rawValue, type: type, description: description))
    }

    /// The payload, in secure storage. The corresponding C function is `keyctl_read`.
    public func read() throws(KeyringErrno) -> SecretBytes { try Keyctl.readSecret(rawValue) }

    /// The payload read into `buffer` (nothing is allocated); returns the payload's
    /// length, which may exceed `buffer.count`. The corresponding C function is `keyctl_read`.
    public func read(into buffer: SecretBytes) throws(KeyringErrno) -> Int {
        try Keyctl.read(rawValue, into: buffer)
    }

    /// The serials this keyring links to. The corresponding C function is `keyctl_read`.
    public func links() throws(KeyringErrno) -> [KeySerial] {
        try Keyctl.readKeyring(rawValue).map(KeySerial.init(rawValue:))
    }

    /// Replaces the payload. The corresponding C function is `keyctl_update`.
    public func update(_ payload: SecretBytes) throws(KeyringErrno) {
        try Keyctl.update(rawValue, secret: payload)
    }

    /// Revokes the key. The corresponding C function is `keyctl_revoke`.
    public func revoke() throws(KeyringErrno) { try Keyctl.revoke(rawValue) }

    /// Invalidates the key: gone at once, zeroed by the kernel's garbage collector.
    /// The corresponding C function is `keyctl_invalidate`.
    public func invalidate() throws(KeyringErrno) { try Keyctl.invalidate(rawValue) }

    /// Unlinks this key from `keyring`. The corresponding C function is `keyctl_unlink`.
    public func unlink(from keyring: KeySerial) throws(KeyringErrno) {
        try Keyctl.unlink(rawValue, from: keyring.rawValue)
    }

    /// Links this key into `keyring`. The corresponding C function is `keyctl_link`.
    public func link(into keyring: KeySerial) throws(KeyringErrno) { try Keyctl.link(rawValue, into: keyring.rawValue) }

    /// Unlinks everything from this keyring. The corresponding C function is `keyctl_clear`.
    public func clear() throws(KeyringErrno) { try Keyctl.clear(rawValue) }

    /// Sets the permission mask. The corresponding C function is `keyctl_setperm`.
    public func setPermissions(_ permissions: KeyPermissions) throws(KeyringErrno) {
        try Keyctl.setPermissions(rawValue, permissions.rawValue)
    }

    /// Changes owner and group; nil leaves one unchanged. The corresponding C function is `keyctl_chown`.
    public func changeOwner(uid: UInt32?, gid: UInt32?) throws(KeyringErrno) {
        try Keyctl.chown(rawValue, uid: uid ?? UInt32.max, gid: gid ?? UInt32.max)
    }

    /// Sets an expiry (0 clears it). Arca never relies on this to wipe a secret.
    /// The corresponding C function is `keyctl_set_timeout`.
    public func setTimeout(seconds: UInt32) throws(KeyringErrno) { try Keyctl.setTimeout(rawValue, seconds: seconds) }

    /// The key's type, owner, group, permissions and description.
    /// The corresponding C function is `keyctl_describe`.
    public func describe() throws(KeyringErrno) -> KeyDescription {
        let record = try Keyctl.describe(rawValue)
        guard let parsed = KeyDescription(record: record) else { throw KeyringErrno.invalidArgument }
        return parsed
    }

    /// Resolves a special id to the real serial, creating the keyring if `create`.
    /// The corresponding C function is `keyctl_get_keyring_ID`.
    public func resolve(create: Bool = false) throws(KeyringErrno) -> KeySerial {
        KeySerial(rawValue: try Keyctl.getKeyringID(rawValue, create: create))
    }

    /// Links `uid`'s persistent keyring into `destination` (uid nil: the caller's own)
    /// and restarts its expiry timer. The corresponding C function is `keyctl_get_persistent`.
    public static func persistentKeyring(uid: UInt32?, linkingInto destination: KeySerial) throws(KeyringErrno)
        -> KeySerial
    {
        KeySerial(rawValue: try Keyctl.getPersistent(uid: uid ?? UInt32.max, destination: destination.rawValue))
    }

    /// Joins a new anonymous session keyring (name nil) or the named one, and returns it.
    /// The corresponding C function is `keyctl_join_session_keyring`.
    public static func joinSessionKeyring(named name: String? = nil) throws(KeyringErrno) -> KeySerial {
        KeySerial(rawValue: try Keyctl.joinSessionKeyring(named: name))
    }
}

/// The record `keyctl_describe` returns: `type;uid;gid;perm;description`.
public struct KeyDescription: Equatable, Sendable {
    /// The key type, e.g. `user` or `keyring`.
    public var type: String
    /// The owner uid.
    public var uid: UInt32
    /// The group id.
    public var gid: UInt32
    /// The permission mask, e.g. `0x0b3f0000`.
    public var permissions: UInt32
    /// The description.
    public var description: String

    /// Parses the record; nil if it is malformed.
    public init?(record: String) {
        let parts = record.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, let uid = UInt32(parts[1]), let gid = UInt32(parts[2]),
            let permissions = UInt32(parts[3], radix: 16)
        else { return nil }
        self.type = String(parts[0])
        self.uid = uid
        self.gid = gid
        self.permissions = permissions
        self.description = String(parts[4])
    }
}
