import ArcaCrypto

/// The primary key of a generic password (ARCHITECTURE §4): service, account,
/// access group and synchronizable. Empty strings mean "not set".
public struct GenericPasswordKey: Hashable, Sendable {
    /// `kSecAttrService`.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrAccessGroup`; empty for the default group.
    public var accessGroup: String
    /// `kSecAttrSynchronizable`.
    public var synchronizable: Bool

    /// A generic password's primary key.
    public init(service: String, account: String, accessGroup: String = "", synchronizable: Bool = false) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
    }
}

/// The primary key of an internet password (ARCHITECTURE §4). Empty strings
/// and port 0 mean "not set".
public struct InternetPasswordKey: Hashable, Sendable {
    /// `kSecAttrServer`.
    public var server: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrProtocol`, as Apple's four-letter code (`htps`, `ssh `…).
    public var `protocol`: String
    /// `kSecAttrPort`; 0 when unspecified.
    public var port: Int
    /// `kSecAttrPath`.
    public var path: String
    /// `kSecAttrSecurityDomain`.
    public var securityDomain: String
    /// `kSecAttrAuthenticationType`, as Apple's four-letter code (`form`, `dflt`…).
    public var authenticationType: String
    /// `kSecAttrAccessGroup`; empty for the default group.
    public var accessGroup: String
    /// `kSecAttrSynchronizable`.
    public var synchronizable: Bool

    /// An internet password's primary key.
    public init(
        server: String, account: String, protocol: String = "", port: Int = 0, path: String = "",
        securityDomain: String = "", authenticationType: String = "", accessGroup: String = "",
        synchronizable: Bool = false
    ) {
        self.server = server
        self.account = account
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.securityDomain = securityDomain
        self.authenticationType = authenticationType
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
    }
}

/// The primary key of an item: what makes it unique, and what its kernel key's
/// description is made from (see `keyDescription` and arca-keyring(7)).
public enum KeyringItemKey: Hashable, Sendable {
    /// A generic password (`genp`).
    case genericPassword(GenericPasswordKey)
    /// An internet password (`inet`).
    case internetPassword(InternetPasswordKey)
}

/// An item to place in the kernel: its primary key and its secret.
public struct KeyringItem: Sendable {
    /// The item's primary key.
    public var key: KeyringItemKey
    /// The secret, which becomes the key's payload byte for byte.
    public var secret: SecretBytes

    /// An item for `install` or `grant`.
    public init(key: KeyringItemKey, secret: SecretBytes) {
        self.key = key
        self.secret = secret
    }
}

/// The accessibility classes that have their own ring in `@u` (ARCHITECTURE §6).
/// The ThisDeviceOnly and PasscodeSet variants map onto these two.
public enum KeyringClass: String, CaseIterable, Sendable {
    /// `whenUnlocked`: present while the user has an unlocked session. Ring `arca:wu`.
    case whenUnlocked
    /// `afterFirstUnlock`: present from the first unlock until reboot. Ring `arca:afu`.
    case afterFirstUnlock

    /// The description of the class's keyring in `@u`.
    public var ringDescription: String {
        switch self {
        case .whenUnlocked: "arca:wu"
        case .afterFirstUnlock: "arca:afu"
        }
    }
}

/// Why an item was not placed in the kernel. Such items stay served by arcad
/// over the socket.
public enum NotLoadedReason: Equatable, Sendable, CustomStringConvertible {
    /// The secret is larger than the kernel's 32,767-byte limit for `user` keys.
    case payloadTooLarge(bytes: Int)
    /// The description is longer than the kernel's 4,095 bytes.
    case descriptionTooLong(bytes: Int)
    /// Root's key quota (`/proc/sys/kernel/keys/root_maxkeys`, `root_maxbytes`) is full.
    case quotaExceeded
    /// Another item in the same batch has the same primary key; the first one was loaded.
    case duplicate
    /// Loading it would exceed the user's kernel budget or take root past arcad's
    /// share of its quota (`KernelBudget`).
    case overBudget
    /// Another kernel error.
    case kernel(KeyringErrno)

    /// A short explanation for `arca status`.
    public var description: String {
        switch self {
        case .payloadTooLarge(let bytes): "secret of \(bytes) bytes exceeds the kernel's 32767"
        case .descriptionTooLong(let bytes): "description of \(bytes) bytes exceeds the kernel's 4095"
        case .quotaExceeded: "root's key quota is full (EDQUOT)"
        case .duplicate: "duplicate primary key in the batch"
        case .overBudget: "over the user's kernel budget or arcad's share of root's quota"
        case .kernel(let code): "kernel error \(code)"
        }
    }
}

/// What `install` or `grant` placed in the kernel and what it could not.
public struct LoadReport: Sendable {
    /// The number of items now readable from the kernel.
    public var loaded: Int
    /// The items that were not loaded, and why.
    public var notLoaded: [(key: KeyringItemKey, reason: NotLoadedReason)]
    /// The serial of the ring that now holds the items.
    public var ring: KeySerial
}

/// What `put` did with one item.
public enum PutResult: Equatable, Sendable {
    /// The item is in the kernel, in the class's ring.
    case placed
    /// The item stays socket-only, and no older version of it is left in the kernel.
    case notLoaded(NotLoadedReason)
    /// arcad made no ring of that class for the user (or it is gone): install one.
    case noRing
}

/// The result of dropping one item's key from a ring.
public enum DropResult: Equatable, Sendable {
    /// The item's key was in the ring and is destroyed.
    case dropped
    /// The ring holds no key of that description (the item was socket-only).
    case absent
    /// arcad made no ring of that class for the user (or it is gone): install one.
    case noRing
}

/// What `purge` did, for an honest log line.
public struct PurgeReport: Equatable, Sendable {
    /// Rings and item keys of the uid destroyed (by serial, or found by the `/proc/keys` scan).
    public var destroyed = 0
    /// Keys that could not be destroyed.
    public var notDestroyed = 0
    /// Whether the uid's `@u` was cleared and its default permissions put back (an
    /// invalidation of `@u` or `@us` that failed after it is one line in `failures`).
    public var userKeyringReset = false
    /// `@u`'s permissions before the reset, when they were not the default.
    public var changedPermissions: UInt32?
    /// Whether the uid's persistent keyring was cleared.
    public var persistentKeyringCleared = false
    /// What failed, one line each (no secret in them).
    public var failures: [String] = []

    /// A purge that did what it should: nothing left, `@u` reset.
    public var isComplete: Bool { notDestroyed == 0 && userKeyringReset && failures.isEmpty }
}
