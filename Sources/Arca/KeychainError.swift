import ArcaClient
import ArcaProtocol

/// Why a ``Keychain`` operation failed. A missing item is not an error for
/// `get` (it returns `nil`); a locked vault always is (``Code/interactionNotAllowed``).
public struct KeychainError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code whose raw value is Apple's `OSStatus` number.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The `OSStatus` number.
        public let rawValue: OSStatus
        /// Wraps an `OSStatus` number.
        public init(rawValue: OSStatus) { self.rawValue = rawValue }

        /// The code of a status Arca returns: the numbers are written once, in `ArcaStatus`.
        public init(_ status: ArcaStatus) { self.rawValue = status.rawValue }

        // Apple's codes that Arca never returns but ported code may compare against;
        // the only numbers written here (ArcaSecurity's errSec… constants derive from these).
        /// Function or operation not implemented (`errSecUnimplemented`).
        public static let unimplemented = Code(rawValue: -4)
        /// Failed to allocate memory (`errSecAllocate`).
        public static let allocate = Code(rawValue: -108)
        /// User canceled the operation (`errSecUserCanceled`).
        public static let userCanceled = Code(rawValue: -128)

        /// A parameter was invalid (`errSecParam`).
        public static let param = Code(.param)
        /// arcad is not running or not reachable (`errSecNotAvailable`).
        public static let notAvailable = Code(.notAvailable)
        /// Wrong password or key (`errSecAuthFailed`).
        public static let authFailed = Code(.authFailed)
        /// An item with the same primary key exists (`errSecDuplicateItem`).
        public static let duplicateItem = Code(.duplicateItem)
        /// No item matched (`errSecItemNotFound`).
        public static let itemNotFound = Code(.itemNotFound)
        /// The vault (or the item's class) is locked (`errSecInteractionNotAllowed`).
        public static let interactionNotAllowed = Code(.interactionNotAllowed)
        /// Data could not be decoded (`errSecDecode`).
        public static let decode = Code(.decode)
        /// The access group or principal is not allowed (`errSecMissingEntitlement`).
        public static let missingEntitlement = Code(.missingEntitlement)
        /// A lock could not destroy every kernel key (`errSecInternalComponent`).
        public static let internalComponent = Code(.internalComponent)
        /// The vault is at its size limit (`errSecQuotaExceeded`).
        public static let quotaExceeded = Code(.quotaExceeded)
        /// arcad's reply would not fit in one message (`errSecBufferTooSmall`).
        public static let bufferTooSmall = Code(.bufferTooSmall)

        /// The code's name, such as `itemNotFound`, or its number when unknown.
        public var description: String {
            switch self {
            case .param: "param"
            case .notAvailable: "notAvailable"
            case .authFailed: "authFailed"
            case .duplicateItem: "duplicateItem"
            case .itemNotFound: "itemNotFound"
            case .interactionNotAllowed: "interactionNotAllowed"
            case .decode: "decode"
            case .missingEntitlement: "missingEntitlement"
            case .internalComponent: "internalComponent"
            case .quotaExceeded: "quotaExceeded"
            case .bufferTooSmall: "bufferTooSmall"
            default: "OSStatus \(rawValue)"
            }
        }
    }

    /// The stable code.
    public let code: Code
    /// A human-readable explanation; it never contains a secret.
    public let message: String

    /// The `OSStatus` of the error (Apple's number).
    public var status: OSStatus { code.rawValue }

    /// An error from its code and message.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// An error from an `OSStatus`, with the standard message for it.
    public init(status: OSStatus) {
        self.init(code: Code(rawValue: status), message: KeychainError.standardMessage(for: status))
    }

    /// `message (code, OSStatus n)`.
    public var description: String { "\(message) (\(code), OSStatus \(code.rawValue))" }

    /// The message Apple's `SecCopyErrorMessageString` gives for the codes Arca
    /// returns, and a generic one for the others.
    public static func standardMessage(for status: OSStatus) -> String {
        switch Code(rawValue: status) {
        case Code(.success): "No error."
        case .unimplemented: "Function or operation not implemented."
        case .param: "One or more parameters passed to a function were not valid."
        case .allocate: "Failed to allocate memory."
        case .userCanceled: "User canceled the operation."
        case .notAvailable: "No keychain is available. You may need to restart your computer."
        case .authFailed: "The user name or passphrase you entered is not correct."
        case .duplicateItem: "The specified item already exists in the keychain."
        case .itemNotFound: "The specified item could not be found in the keychain."
        case .interactionNotAllowed: "User interaction is not allowed."
        case .decode: "Unable to decode the provided data."
        case .missingEntitlement: "A required entitlement isn't present."
        case .internalComponent: "An internal component failed."
        case .quotaExceeded: "The quota was exceeded."
        case .bufferTooSmall: "The buffer is too small."
        default: "OSStatus \(status)"
        }
    }

    /// The one mapping from client-side failures to the error codes.
    static func from(_ error: ClientError) -> KeychainError {
        KeychainError(code: Code(error.status), message: error.description)
    }

    /// The error of an error reply from arcad.
    static func from(status: ArcaStatus, message: String) -> KeychainError {
        KeychainError(
            code: Code(status),
            message: message.isEmpty ? standardMessage(for: status.rawValue) : message)
    }

    /// A reply of an unexpected kind: the protocol was not followed.
    static func unexpected(_ reply: Reply) -> KeychainError {
        KeychainError(code: .decode, message: "unexpected reply from arcad (\(reply.kind))")
    }
}
