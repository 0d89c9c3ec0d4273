#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An error number returned by a keyring system call, in the manner of
/// swift-system's `Errno`: a struct over `CInt` with a named static for every
/// code the keyring calls document, so callers can `switch` on them.
public struct KeyringErrno: RawRepresentable, Error, Hashable, Sendable {
    /// The raw C `errno` value.
    public let rawValue: CInt

    /// Wraps a raw `errno` value.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The value of `errno` now.
    static var current: KeyringErrno { KeyringErrno(rawValue: errno) }

    /// Operation not permitted (`EPERM`).
    public static let notPermitted = KeyringErrno(rawValue: EPERM)
    /// Interrupted system call (`EINTR`); retried by the wrappers, never surfaced.
    public static let interrupted = KeyringErrno(rawValue: EINTR)
    /// No such process (`ESRCH`).
    public static let noSuchProcess = KeyringErrno(rawValue: ESRCH)
    /// Out of memory (`ENOMEM`).
    public static let noMemory = KeyringErrno(rawValue: ENOMEM)
    /// Permission denied by the key's permission mask (`EACCES`).
    public static let permissionDenied = KeyringErrno(rawValue: EACCES)
    /// Bad address (`EFAULT`).
    public static let badAddress = KeyringErrno(rawValue: EFAULT)
    /// The key exists already (`EEXIST`).
    public static let exists = KeyringErrno(rawValue: EEXIST)
    /// The key is not a keyring where one is needed (`ENOTDIR`).
    public static let notAKeyring = KeyringErrno(rawValue: ENOTDIR)
    /// Invalid argument, for instance a description or payload too long (`EINVAL`).
    public static let invalidArgument = KeyringErrno(rawValue: EINVAL)
    /// Too many open files (`ENFILE`).
    public static let tooManyOpenFiles = KeyringErrno(rawValue: ENFILE)
    /// The kernel was built without key management (`ENOSYS`).
    public static let noKernelSupport = KeyringErrno(rawValue: ENOSYS)
    /// Operation not supported by the key type (`EOPNOTSUPP`).
    public static let notSupported = KeyringErrno(rawValue: EOPNOTSUPP)
    /// Disk quota exceeded: the owner's key quota is full (`EDQUOT`).
    public static let quotaExceeded = KeyringErrno(rawValue: EDQUOT)
    /// Timed out (`ETIMEDOUT`).
    public static let timedOut = KeyringErrno(rawValue: ETIMEDOUT)
    /// Required key not available: not found, or invalidated (`ENOKEY`).
    public static let noKey = KeyringErrno(rawValue: ENOKEY)
    /// The key has expired (`EKEYEXPIRED`).
    public static let keyExpired = KeyringErrno(rawValue: EKEYEXPIRED)
    /// The key has been revoked (`EKEYREVOKED`).
    public static let keyRevoked = KeyringErrno(rawValue: EKEYREVOKED)
    /// The key was rejected by the service (`EKEYREJECTED`).
    public static let keyRejected = KeyringErrno(rawValue: EKEYREJECTED)
    /// A payload larger than the buffer or the type allows (`EMSGSIZE`).
    public static let messageTooLong = KeyringErrno(rawValue: EMSGSIZE)
}

extension KeyringErrno: CustomStringConvertible {
    /// The symbolic name and the C library's message, e.g. `ENOKEY (Required key not available)`.
    public var description: String {
        "\(name) (\(String(cString: strerror(rawValue))))"
    }

    /// The symbolic name of the code, e.g. `EKEYREVOKED`.
    public var name: String {
        switch rawValue {
        case EPERM: "EPERM"
        case EINTR: "EINTR"
        case ESRCH: "ESRCH"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EFAULT: "EFAULT"
        case EEXIST: "EEXIST"
        case ENOTDIR: "ENOTDIR"
        case EINVAL: "EINVAL"
        case ENFILE: "ENFILE"
        case ENOSYS: "ENOSYS"
        case EOPNOTSUPP: "EOPNOTSUPP"
        case EDQUOT: "EDQUOT"
        case ETIMEDOUT: "ETIMEDOUT"
        case ENOKEY: "ENOKEY"
        case EKEYEXPIRED: "EKEYEXPIRED"
        case EKEYREVOKED: "EKEYREVOKED"
        case EKEYREJECTED: "EKEYREJECTED"
        case EMSGSIZE: "EMSGSIZE"
        default: "errno \(rawValue)"
        }
    }
}

/// Calls `body` until it does not fail with `EINTR`; a result below zero is a
/// failure whose code is in `errno`. The one place EINTR is retried.
@inline(__always)
func retryingOnInterrupt<R: BinaryInteger>(_ body: () -> R) throws(KeyringErrno) -> R {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = KeyringErrno.current
        if code != .interrupted { throw code }
    }
}

