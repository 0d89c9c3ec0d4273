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

        /// A parameter was invalid (`errSecParam`, -50).
        public static let param = Code(rawValue: -50)
        /// arcad is not running or not reachable (`errSecNotAvailable`, -25291).
        public static let notAvailable = Code(rawValue: -25291)
        /// Wrong password or key (`errSecAuthFailed`, -25293).
        public static let authFailed = Code(rawValue: -25293)
        /// An item with the same primary key exists (`errSecDuplicateItem`, -25299).
        public static let duplicateItem = Code(rawValue: -25299)
        /// No item matched (`errSecItemNotFound`, -25300).
        public static let itemNotFound = Code(rawValue: -25300)
        /// The vault (or the item's class) is locked (`errSecInteractionNotAllowed`, -25308).
        public static let interactionNotAllowed = Code(rawValue: -25308)
        /// Data could not be decoded (`errSecDecode`, -26275).
        public static let decode = Code(rawValue: -26275)
        /// The access group or principal is not allowed (`errSecMissingEntitlement`, -34018).
        public static let missingEntitlement = Code(rawValue: -34018)
        /// A lock could not destroy every kernel key (`errSecInternalComponent`, -2070).
        public static let internalComponent = Code(rawValue: -2070)
        /// The vault is at its size limit (`errSecQuotaExceeded`, -67596).
        public static let quotaExceeded = Code(rawValue: -67596)

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
        switch status {
        case 0: "No error."
        case -4: "Function or operation not implemented."
        case -50: "One or more parameters passed to a function were not valid."
        case -108: "Failed to allocate memory."
        case -128: "User canceled the operation."
        case -25291: "No keychain is available. You may need to restart your computer."
        case -25293: "The user name or passphrase you entered is not correct."
        case -25299: "The specified item already exists in the keychain."
        case -25300: "The specified item could not be found in the keychain."
        case -25308: "User interaction is not allowed."
        case -26275: "Unable to decode the provided data."
        case -34018: "A required entitlement isn't present."
        case -2070: "An internal component failed."
        case -67596: "The quota was exceeded."
        default: "OSStatus \(status)"
        }
    }

    /// The one mapping from client-side failures to the error codes.
    static func from(_ error: ClientError) -> KeychainError {
        KeychainError(code: Code(rawValue: error.status.rawValue), message: error.description)
    }

    /// The error of an error reply from arcad.
    static func from(status: ArcaStatus, message: String) -> KeychainError {
        KeychainError(
            code: Code(rawValue: status.rawValue),
            message: message.isEmpty ? standardMessage(for: status.rawValue) : message)
    }

    /// A reply of an unexpected kind: the protocol was not followed.
    static func unexpected(_ reply: Reply) -> KeychainError {
        KeychainError(code: .decode, message: "unexpected reply from arcad (\(reply.kind))")
    }
}
