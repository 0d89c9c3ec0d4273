import ArcaProtocol

/// The errors of the vault layer. None carries an attribute value or a secret.
/// `status` is the one mapping to Apple's `OSStatus` numbers (see arca-vault(5)).
public enum VaultError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A parameter was invalid; the message says which and why.
    case param(String)
    /// An item with the same primary key exists, or an update would make two collide.
    case duplicateItem
    /// No item matched.
    case itemNotFound
    /// The class key of the item (or of every matching item) is not loaded.
    case locked
    /// Wrong password, derived key or recovery key.
    case authFailed
    /// The file is not a vault, is truncated or corrupted, or an item failed to authenticate.
    case damaged(path: String, reason: String)
    /// The file was written by a newer Arca whose schema this one does not know.
    case unsupportedVersion(path: String, version: Int)
    /// The vault file does not exist.
    case noSuchVault(path: String)
    /// A vault already exists at this path.
    case alreadyExists(path: String)
    /// SQLite failed for a reason other than damage (I/O, disk full, busy).
    case storage(path: String, reason: String)

    /// The `OSStatus` of this error.
    public var status: ArcaStatus {
        switch self {
        case .param: .param
        // No vault yet means no keys: locked, as a client sees it (never "not found").
        case .noSuchVault: .interactionNotAllowed
        case .duplicateItem, .alreadyExists: .duplicateItem
        case .itemNotFound: .itemNotFound
        case .locked: .interactionNotAllowed
        case .authFailed: .authFailed
        case .damaged, .unsupportedVersion, .storage: .decode
        }
    }

    /// A message for logs; names the file where there is one.
    public var description: String {
        switch self {
        case .param(let why): "invalid parameter: \(why)"
        case .duplicateItem: "an item with the same primary key already exists"
        case .itemNotFound: "no item matched"
        case .locked: "the item's class is locked"
        case .authFailed: "wrong password or key"
        case .damaged(let path, let reason): "\(path): damaged vault: \(reason)"
        case .unsupportedVersion(let path, let version):
            "\(path): vault schema version \(version) is newer than this Arca supports"
        case .noSuchVault(let path): "\(path): no such vault"
        case .alreadyExists(let path): "\(path): a vault already exists"
        case .storage(let path, let reason): "\(path): storage error: \(reason)"
        }
    }
}
