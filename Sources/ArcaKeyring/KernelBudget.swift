/// How much of root's kernel-key quota arcad lets one user's items take, and how
/// much of it arcad leaves to everything else on the machine.
///
/// Item keys are owned by root and charged to root (a key charged to its user
/// could be kept alive or starved by that user: arca-keyring(7) gives the
/// reasoning). Root's quota is shared by every root process, so arcad rations
/// it: each uid may place at most `keysPerUser` keys and `bytesPerUser` bytes
/// (both classes together), and arcad never adds a key that would take root's
/// usage past `rootSharePercent` of `root_maxkeys` / `root_maxbytes`, whoever
/// holds the rest. Items beyond either limit stay socket-only and are counted in
/// `arca status`, like items too large for the kernel.
public struct KernelBudget: Equatable, Sendable {
    /// Keys one uid's rings may hold (arca.conf `kernel_keys_per_user`).
    public var keysPerUser: Int
    /// Bytes one uid's rings may be charged (arca.conf `kernel_bytes_per_user`).
    public var bytesPerUser: Int
    /// The share of root's quota, in percent, past which arcad adds no key
    /// (arca.conf `kernel_root_share`).
    public var rootSharePercent: Int

    /// The defaults documented in arca.conf(5).
    public static let defaultKeysPerUser = 2_000
    /// The defaults documented in arca.conf(5).
    public static let defaultBytesPerUser = 2 << 20
    /// The defaults documented in arca.conf(5).
    public static let defaultRootSharePercent = 50

    /// A budget; the defaults are arca.conf's.
    public init(
        keysPerUser: Int = defaultKeysPerUser, bytesPerUser: Int = defaultBytesPerUser,
        rootSharePercent: Int = defaultRootSharePercent
    ) {
        self.keysPerUser = keysPerUser
        self.bytesPerUser = bytesPerUser
        self.rootSharePercent = rootSharePercent
    }

    /// What root may still be charged before reaching the share, given its current usage.
    public func rootAllowance(_ root: KeyQuota) -> KeyCost {
        KeyCost(
            keys: max(0, root.maximumKeys / 100 * rootSharePercent - root.quotaKeys),
            bytes: max(0, root.maximumBytes / 100 * rootSharePercent - root.quotaBytes))
    }

    /// What a uid already charged `used` may still add: the smaller of its own
    /// remaining budget and root's remaining share.
    func allowance(used: KeyCost) -> KeyCost {
        let own = KeyCost(keys: max(0, keysPerUser - used.keys), bytes: max(0, bytesPerUser - used.bytes))
        guard let root = try? KeyQuota.root() else { return KeyCost() }
        return own.smaller(rootAllowance(root))
    }
}

/// Keys and bytes as the kernel charges them to a key's owner.
public struct KeyCost: Equatable, Sendable {
    /// Keys.
    public var keys = 0
    /// Bytes.
    public var bytes = 0

    /// A cost.
    public init(keys: Int = 0, bytes: Int = 0) {
        self.keys = keys
        self.bytes = bytes
    }

    /// What one key of `description` and `payload` bytes, linked into one keyring,
    /// costs: the description and its NUL, the payload, and 4 bytes for the link
    /// (the kernel's `KEYQUOTA_LINK_BYTES`).
    static func key(description: String, payload: Int) -> KeyCost {
        KeyCost(keys: 1, bytes: description.utf8.count + 1 + payload + 4)
    }

    /// Whether `cost` fits in what is left.
    func covers(_ cost: KeyCost) -> Bool { cost.keys <= keys && cost.bytes <= bytes }

    func smaller(_ other: KeyCost) -> KeyCost { KeyCost(keys: min(keys, other.keys), bytes: min(bytes, other.bytes)) }

    static func + (a: KeyCost, b: KeyCost) -> KeyCost { KeyCost(keys: a.keys + b.keys, bytes: a.bytes + b.bytes) }
    static func - (a: KeyCost, b: KeyCost) -> KeyCost { KeyCost(keys: a.keys - b.keys, bytes: a.bytes - b.bytes) }
    static func += (a: inout KeyCost, b: KeyCost) { a = a + b }
    static func -= (a: inout KeyCost, b: KeyCost) { a = a - b }
}
