import Arca
import ArcaProtocol

// The Keychain's constants with Apple's raw values, so that dictionaries
// printed or persisted by ported code look the same on both platforms. The
// OSStatus numbers are not written here: they come from ArcaStatus (the wire's
// codes) and KeychainError.Code (Apple's codes Arca never returns).

/// No error (`noErr`).
public let noErr: OSStatus = ArcaStatus.success.rawValue
/// No error.
public let errSecSuccess: OSStatus = ArcaStatus.success.rawValue
/// Function or operation not implemented.
public let errSecUnimplemented: OSStatus = KeychainError.Code.unimplemented.rawValue
/// One or more parameters passed to a function were not valid.
public let errSecParam: OSStatus = ArcaStatus.param.rawValue
/// Failed to allocate memory.
public let errSecAllocate: OSStatus = KeychainError.Code.allocate.rawValue
/// User canceled the operation.
public let errSecUserCanceled: OSStatus = KeychainError.Code.userCanceled.rawValue
/// No keychain is available: arcad is not running or not reachable.
public let errSecNotAvailable: OSStatus = ArcaStatus.notAvailable.rawValue
/// The password or key is not correct.
public let errSecAuthFailed: OSStatus = ArcaStatus.authFailed.rawValue
/// The item already exists.
public let errSecDuplicateItem: OSStatus = ArcaStatus.duplicateItem.rawValue
/// The item could not be found.
public let errSecItemNotFound: OSStatus = ArcaStatus.itemNotFound.rawValue
/// The buffer is too small: arcad's reply would not fit in one frame (a batch of reads splits).
public let errSecBufferTooSmall: OSStatus = ArcaStatus.bufferTooSmall.rawValue
/// User interaction is not allowed: on Linux, the vault or the item's class is locked.
public let errSecInteractionNotAllowed: OSStatus = ArcaStatus.interactionNotAllowed.rawValue
/// Unable to decode the provided data.
public let errSecDecode: OSStatus = ArcaStatus.decode.rawValue
/// A required entitlement isn't present: the access group or principal is not allowed.
public let errSecMissingEntitlement: OSStatus = ArcaStatus.missingEntitlement.rawValue
/// A lock could not destroy every kernel key of the class.
public let errSecInternalComponent: OSStatus = ArcaStatus.internalComponent.rawValue
/// The user's vault is at its size limit (arca.conf `max_vault_bytes`).
public let errSecQuotaExceeded: OSStatus = ArcaStatus.quotaExceeded.rawValue

/// The item class key.
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// Generic password items.
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// Internet password items.
nonisolated(unsafe) public let kSecClassInternetPassword: CFString = "inet"

/// Service (generic passwords).
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// Account.
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// Label.
nonisolated(unsafe) public let kSecAttrLabel: CFString = "labl"
/// Description.
nonisolated(unsafe) public let kSecAttrDescription: CFString = "desc"
/// Comment.
nonisolated(unsafe) public let kSecAttrComment: CFString = "icmt"
/// Generic bytes (`Data`).
nonisolated(unsafe) public let kSecAttrGeneric: CFString = "gena"
/// Creator, a four-character code as a number.
nonisolated(unsafe) public let kSecAttrCreator: CFString = "crtr"
/// Type, a four-character code as a number.
nonisolated(unsafe) public let kSecAttrType: CFString = "type"
/// Whether the item is invisible.
nonisolated(unsafe) public let kSecAttrIsInvisible: CFString = "invi"
/// Whether the item is negative (a "never save" marker).
nonisolated(unsafe) public let kSecAttrIsNegative: CFString = "nega"
/// Creation date, set by the store.
nonisolated(unsafe) public let kSecAttrCreationDate: CFString = "cdat"
/// Modification date, set by the store.
nonisolated(unsafe) public let kSecAttrModificationDate: CFString = "mdat"
/// Server (internet passwords).
nonisolated(unsafe) public let kSecAttrServer: CFString = "srvr"
/// Protocol (internet passwords), one of the `kSecAttrProtocol…` values.
nonisolated(unsafe) public let kSecAttrProtocol: CFString = "ptcl"
/// Port (internet passwords), a number.
nonisolated(unsafe) public let kSecAttrPort: CFString = "port"
/// Path (internet passwords).
nonisolated(unsafe) public let kSecAttrPath: CFString = "path"
/// Security domain (internet passwords).
nonisolated(unsafe) public let kSecAttrSecurityDomain: CFString = "sdmn"
/// Authentication type (internet passwords), one of the `kSecAttrAuthenticationType…` values.
nonisolated(unsafe) public let kSecAttrAuthenticationType: CFString = "atyp"
/// Access group: on Linux a namespace within the user's vault (no entitlements).
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"
/// Whether the item is synchronizable; `kSecAttrSynchronizableAny` in a query matches both.
nonisolated(unsafe) public let kSecAttrSynchronizable: CFString = "sync"
/// In a query, matches items whatever their synchronizable value.
nonisolated(unsafe) public let kSecAttrSynchronizableAny: CFString = "syna"
/// Accessibility, one of the `kSecAttrAccessible…` values.
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"

/// While the user has an unlocked session (the default).
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
/// From the first unlock after boot until reboot.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// While unlocked; never leaves this machine.
nonisolated(unsafe) public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
/// After first unlock; never leaves this machine.
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// While unlocked, only in a password-protected vault; never leaves this machine.
nonisolated(unsafe) public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
/// Deprecated on Apple platforms; stored as ``kSecAttrAccessibleAfterFirstUnlock``.
nonisolated(unsafe) public let kSecAttrAccessibleAlways: CFString = "dk"
/// Deprecated on Apple platforms; stored as ``kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly``.
nonisolated(unsafe) public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

/// HTTPS.
nonisolated(unsafe) public let kSecAttrProtocolHTTPS: CFString = "htps"
/// HTTP.
nonisolated(unsafe) public let kSecAttrProtocolHTTP: CFString = "http"
/// FTP.
nonisolated(unsafe) public let kSecAttrProtocolFTP: CFString = "ftp "
/// SSH.
nonisolated(unsafe) public let kSecAttrProtocolSSH: CFString = "ssh "
/// SMTP.
nonisolated(unsafe) public let kSecAttrProtocolSMTP: CFString = "smtp"
/// IMAP.
nonisolated(unsafe) public let kSecAttrProtocolIMAP: CFString = "imap"
/// Default authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"
/// An HTML form.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
/// HTTP basic authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
/// HTTP digest authentication.
nonisolated(unsafe) public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"

/// The secret (`Data`).
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// A persistent reference (`Data`) naming one item.
nonisolated(unsafe) public let kSecValuePersistentRef: CFString = "v_PersistentRef"
/// An item reference; password items have none on Linux (errSecParam).
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// Return the secret.
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Return the attributes, as a dictionary.
nonisolated(unsafe) public let kSecReturnAttributes: CFString = "r_Attributes"
/// Return an item reference; for password items, the attributes dictionary.
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Return the persistent reference.
nonisolated(unsafe) public let kSecReturnPersistentRef: CFString = "r_PersistentRef"
/// How many items to match: ``kSecMatchLimitOne``, ``kSecMatchLimitAll`` or a number.
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// The first match only (the default of `SecItemCopyMatching`).
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
/// Every match; the result is an array.
nonisolated(unsafe) public let kSecMatchLimitAll: CFString = "m_LimitAll"
/// Compare strings case-insensitively.
nonisolated(unsafe) public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
/// Accepted and ignored: Arca has one keychain per user.
nonisolated(unsafe) public let kSecUseDataProtectionKeychain: CFString = "nleg"
