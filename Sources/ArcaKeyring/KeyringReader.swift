import ArcaCrypto

/// The read path of the CLI and the library: items straight from the kernel,
/// two system calls in the common case.
///
/// A key is readable only by a process that *possesses* it, that is, reaches it
/// from its own thread, process or session keyring. A login session set up by
/// pam_keyinit links `@u` into the session keyring, and a process without a session
/// keyring reaches `@u` through the user-session keyring; a systemd service with
/// `KeyringMode=private` has a fresh session keyring without it. So ``read(_:)``
/// searches `@u` itself and reads, and only when the read is refused (that private
/// session keyring) links `@u` into its *process* keyring, which is neither inherited
/// by children nor kept across exec, and reads again. ``find(_:)``, and every read
/// that includes the persistent keyring (services), link `@u` (and the caller's
/// persistent keyring) into the process keyring first and search that.
public struct KeyringReader: Sendable {
    /// Whether to also look in the caller's persistent keyring (`arca:svc`, for services).
    public var includesPersistentKeyring: Bool

    /// A reader; `includesPersistentKeyring` for system services reading granted items.
    public init(includesPersistentKeyring: Bool = false) {
        self.includesPersistentKeyring = includesPersistentKeyring
    }

    /// The serial of the item's key, linking the keyrings into the process keyring
    /// on first use. Throws ENOKEY if the item is not in the kernel (locked, absent,
    /// or too large for the kernel: ask arcad).
    public func find(_ key: KeyringItemKey) throws(KeyringError) -> KeySerial {
        try find(description: key.keyDescription)
    }

    private func find(description: String) throws(KeyringError) -> KeySerial {
        do throws(KeyringErrno) {
            return try KeySerial.processKeyring.search(type: "user", description: description)
        } catch {
            // ENOKEY here is also what a missing process keyring (a fresh process or
            // a forked child) gives, so link and search once more.
            guard error == .noKey else { throw KeyringError.from(error, operation: "keyctl_search") }
        }
        try linkSources()
        return try mapped("keyctl_search") { () throws(KeyringErrno) in
            try KeySerial.processKeyring.search(type: "user", description: description)
        }
    }

    /// The item's secret, in new secure storage.
    public func read(_ key: KeyringItemKey) throws(KeyringError) -> SecretBytes {
        try readPossessed(key.keyDescription) { serial throws(KeyringErrno) in try serial.read() }
    }

    /// Reads the item's secret into `buffer` without allocating; returns the
    /// secret's length, which may exceed `buffer.count` (then only a prefix was copied).
    public func read(_ key: KeyringItemKey, into buffer: SecretBytes) throws(KeyringError) -> Int {
        try read(description: key.keyDescription, into: buffer)
    }

    /// ``read(_:into:)`` of the key with this description (``KeyringItemKey/keyDescription``).
    public func read(description: String, into buffer: SecretBytes) throws(KeyringError) -> Int {
        try readPossessed(description) { serial throws(KeyringErrno) in try serial.read(into: buffer) }
    }

    /// Runs `read` on the item's key. Without the persistent keyring the key is searched
    /// for in `@u` itself: a special keyring counts as possessed, so the search reaches
    /// the possessor-only rings under it. Whether the read is allowed depends on the
    /// caller's own keyrings: in a login session (pam_keyinit links `@u` into the
    /// session keyring) or without any session keyring (the user-session keyring links
    /// `@u`) it is, and `arca get` costs two system calls and never creates a process
    /// keyring. In a private session keyring (`KeyringMode=private`) the read is refused
    /// with EACCES, and goes again once `@u` is linked into the process keyring, as
    /// ``find(_:)`` does for every search.
    // Inlined: an unspecialised generic here made a fresh process look up `Errno: Error` at run time.
    @inline(__always)
    private func readPossessed<R>(
        _ description: String, _ read: (KeySerial) throws(KeyringErrno) -> R
    ) throws(KeyringError) -> R {
        let serial: KeySerial
        if includesPersistentKeyring {
            serial = try find(description: description)
        } else {
            serial = try mapped("keyctl_search") { () throws(KeyringErrno) in
                try KeySerial.userKeyring.search(type: "user", description: description)
            }
            do throws(KeyringErrno) {
                return try read(serial)
            } catch {
                guard error == .permissionDenied else { throw KeyringError.from(error, operation: "keyctl_read") }
            }
            try linkSources()
        }
        return try mapped("keyctl_read") { () throws(KeyringErrno) in try read(serial) }
    }

    /// Links `@u` (and the persistent keyring) into the process keyring, creating it.
    public func linkSources() throws(KeyringError) {
        try mapped("keyctl_link(@u, @p)") { () throws(KeyringErrno) in
            try KeySerial.userKeyring.link(into: .processKeyring)
        }
        if includesPersistentKeyring {
            _ = try mapped("keyctl_get_persistent") { () throws(KeyringErrno) in
                try KeySerial.persistentKeyring(uid: nil, linkingInto: .processKeyring)
            }
        }
    }

    /// Reads `key` from the caller's persistent keyring only: the system items
    /// arcad granted to the caller's uid (ring `arca:svc`). The persistent keyring
    /// is linked into the calling thread's keyring for the search and unlinked
    /// after, so it never joins the process keyring, where ``read(_:)`` of the
    /// caller's own items would find a system item of the same primary key.
    /// Synchronous; must not be spread over an `await`.
    public func readGranted(_ key: KeyringItemKey) throws(KeyringError) -> SecretBytes {
        try withPersistentKeyring { persistent throws(KeyringError) in
            let serial = try mapped("keyctl_search") { () throws(KeyringErrno) in
                try persistent.search(type: "user", description: key.keyDescription)
            }
            return try mapped("keyctl_read") { () throws(KeyringErrno) in try serial.read() }
        }
    }

    /// ``readGranted(_:)`` into `buffer`; returns the payload length (larger than
    /// the buffer when it did not fit, as `keyctl_read`).
    public func readGranted(_ key: KeyringItemKey, into buffer: SecretBytes) throws(KeyringError) -> Int {
        try withPersistentKeyring { persistent throws(KeyringError) in
            let serial = try mapped("keyctl_search") { () throws(KeyringErrno) in
                try persistent.search(type: "user", description: key.keyDescription)
            }
            return try mapped("keyctl_read") { () throws(KeyringErrno) in try serial.read(into: buffer) }
        }
    }

    private func withPersistentKeyring<R>(_ body: (KeySerial) throws(KeyringError) -> R) throws(KeyringError) -> R {
        let persistent = try mapped("keyctl_get_persistent") { () throws(KeyringErrno) in
            try KeySerial.persistentKeyring(uid: nil, linkingInto: .threadKeyring)
        }
        defer { try? persistent.unlink(from: .threadKeyring) }
        return try body(persistent)
    }
}
