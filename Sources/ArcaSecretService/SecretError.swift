import ArcaProtocol

/// A Secret Service call failed: the D-Bus error a client receives. Names are the
/// ones clients test for (libsecret falls back to `plain` only on NotSupported).
enum SecretError: Error, Equatable {
    case isLocked
    case noSession
    case noSuchObject
    case notSupported(String)
    case unknownObject(String)
    case unknownMethod(String)
    case invalidArgs(String)
    case failed(String)
    /// arcad's reply would not fit in one frame (`bufferTooSmall`): a batch of reads splits.
    case replyTooLarge(String)

    /// The one mapping from arcad's statuses.
    init(status: ArcaStatus, message: String) {
        switch status {
        case .interactionNotAllowed: self = .isLocked
        case .itemNotFound: self = .noSuchObject
        case .param: self = .invalidArgs(message)
        case .bufferTooSmall: self = .replyTooLarge(message)
        // An arcad from before `bufferTooSmall` said it this way: still split, across an upgrade.
        case .decode where message == ProtocolLimits.replyTooLargeMessage: self = .replyTooLarge(message)
        default: self = .failed(message)
        }
    }

    /// The D-Bus error name.
    var name: String {
        switch self {
        case .isLocked: "org.freedesktop.Secret.Error.IsLocked"
        case .noSession: "org.freedesktop.Secret.Error.NoSession"
        case .noSuchObject: "org.freedesktop.Secret.Error.NoSuchObject"
        case .notSupported: "org.freedesktop.DBus.Error.NotSupported"
        case .unknownObject: "org.freedesktop.DBus.Error.UnknownObject"
        case .unknownMethod: "org.freedesktop.DBus.Error.UnknownMethod"
        case .invalidArgs: "org.freedesktop.DBus.Error.InvalidArgs"
        case .failed, .replyTooLarge: "org.freedesktop.DBus.Error.Failed"
        }
    }

    /// The human message.
    var message: String {
        switch self {
        case .isLocked: "the collection or item is locked"
        case .noSession: "no such session, or it belongs to another client"
        case .noSuchObject: "no such item or collection"
        case .notSupported(let m), .unknownObject(let m), .unknownMethod(let m), .invalidArgs(let m), .failed(let m),
            .replyTooLarge(let m):
            m
        }
    }
}
