/// A key's permission mask, as `keyctl_setperm(2)` takes it: four bytes, for the
/// possessor, the owning user, the group and others (high to low), each a set of
/// view, read, write, search, link and setattr. The named sets replace hex literals:
/// `[.possessorView, .possessorRead, .possessorSearch, .userAll]` is `0x0b3f0000`.
public struct KeyPermissions: OptionSet, Hashable, Sendable {
    /// The mask as the kernel stores it.
    public let rawValue: UInt32

    /// Wraps a raw mask.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    // The six bits of one class, shifted into its byte (<linux/keyctl.h>: KEY_POS_VIEW …).
    private static let view: UInt32 = 0x01
    private static let read: UInt32 = 0x02
    private static let write: UInt32 = 0x04
    private static let search: UInt32 = 0x08
    private static let link: UInt32 = 0x10
    private static let setAttribute: UInt32 = 0x20
    private static let allBits: UInt32 = 0x3f
    private static let possessorShift: UInt32 = 24
    private static let userShift: UInt32 = 16
    private static let groupShift: UInt32 = 8

    /// The possessor may see the key's attributes (`KEY_POS_VIEW`).
    public static let possessorView = KeyPermissions(rawValue: view << possessorShift)
    /// The possessor may read the payload or list the keyring (`KEY_POS_READ`).
    public static let possessorRead = KeyPermissions(rawValue: read << possessorShift)
    /// The possessor may update the payload or add to the keyring (`KEY_POS_WRITE`).
    public static let possessorWrite = KeyPermissions(rawValue: write << possessorShift)
    /// The possessor may find the key by search (`KEY_POS_SEARCH`).
    public static let possessorSearch = KeyPermissions(rawValue: search << possessorShift)
    /// The possessor may link the key (`KEY_POS_LINK`).
    public static let possessorLink = KeyPermissions(rawValue: link << possessorShift)
    /// The possessor may change owner, permissions and timeout (`KEY_POS_SETATTR`).
    public static let possessorSetAttribute = KeyPermissions(rawValue: setAttribute << possessorShift)
    /// Every possessor permission (`KEY_POS_ALL`).
    public static let possessorAll = KeyPermissions(rawValue: allBits << possessorShift)

    /// The owning user may see the key's attributes (`KEY_USR_VIEW`).
    public static let userView = KeyPermissions(rawValue: view << userShift)
    /// The owning user may read the payload (`KEY_USR_READ`).
    public static let userRead = KeyPermissions(rawValue: read << userShift)
    /// The owning user may update the payload (`KEY_USR_WRITE`).
    public static let userWrite = KeyPermissions(rawValue: write << userShift)
    /// The owning user may find the key by search (`KEY_USR_SEARCH`).
    public static let userSearch = KeyPermissions(rawValue: search << userShift)
    /// The owning user may link the key (`KEY_USR_LINK`).
    public static let userLink = KeyPermissions(rawValue: link << userShift)
    /// The owning user may change its attributes (`KEY_USR_SETATTR`).
    public static let userSetAttribute = KeyPermissions(rawValue: setAttribute << userShift)
    /// Every owning-user permission (`KEY_USR_ALL`).
    public static let userAll = KeyPermissions(rawValue: allBits << userShift)

    /// Every group permission (`KEY_GRP_ALL`).
    public static let groupAll = KeyPermissions(rawValue: allBits << groupShift)
    /// Every permission for others (`KEY_OTH_ALL`).
    public static let otherAll = KeyPermissions(rawValue: allBits)
}
