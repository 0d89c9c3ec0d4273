import CArcaSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An error number from a failed system call, in swift-system's shape: a struct
/// over `CInt` with a named static for every code Arca's calls document, so
/// callers `switch` on names, not numbers. The one errno type of every module.
public struct Errno: RawRepresentable, Error, Hashable, Sendable {
    /// The raw C `errno` value.
    public let rawValue: CInt

    /// Wraps a raw `errno` value.
    public init(rawValue: CInt) { self.rawValue = rawValue }

    /// The value of `errno` now, on this thread.
    public static var current: Errno { Errno(rawValue: arca_errno()) }

    /// Operation not permitted (`EPERM`).
    public static let notPermitted = Errno(rawValue: EPERM)
    /// No such file or directory (`ENOENT`).
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// No such process (`ESRCH`).
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// Interrupted system call (`EINTR`); retried by ``valueOrErrno(retryOnInterrupt:_:)``,
    /// never surfaced by Arca's wrappers.
    public static let interrupted = Errno(rawValue: EINTR)
    /// Input/output error (`EIO`).
    public static let ioError = Errno(rawValue: EIO)
    /// Bad file descriptor (`EBADF`).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// No child processes (`ECHILD`).
    public static let noChildProcess = Errno(rawValue: ECHILD)
    /// Resource temporarily unavailable (`EAGAIN`, the same number as `EWOULDBLOCK`): a
    /// non-blocking call would block, or a socket timeout passed.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// Out of memory (`ENOMEM`).
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// Permission denied (for a key: by its permission mask) (`EACCES`).
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// Bad address (`EFAULT`).
    public static let badAddress = Errno(rawValue: EFAULT)
    /// File or key exists already (`EEXIST`).
    public static let exists = Errno(rawValue: EEXIST)
    /// Not a directory; for a key: not a keyring where one is needed (`ENOTDIR`).
    public static let notAKeyring = Errno(rawValue: ENOTDIR)
    /// Not a directory (`ENOTDIR`): the file-system name of ``notAKeyring``.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// Invalid argument, for instance a key description or payload too long (`EINVAL`).
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// Too many open files in the system (`ENFILE`).
    public static let tooManyOpenFiles = Errno(rawValue: ENFILE)
    /// Too many open files in this process (`EMFILE`).
    public static let tooManyOpenFilesInProcess = Errno(rawValue: EMFILE)
    /// Too many levels of symbolic links; with `O_NOFOLLOW`, a final symlink (`ELOOP`).
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// Broken pipe: the peer closed its end (`EPIPE`).
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// Result out of range: a buffer too small (`ERANGE`).
    public static let outOfRange = Errno(rawValue: ERANGE)
    /// File name too long (also a socket path over `sun_path`) (`ENAMETOOLONG`).
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// Function not implemented; for keys: a kernel without key management (`ENOSYS`).
    public static let noKernelSupport = Errno(rawValue: ENOSYS)
    /// Operation not supported (for a key: by its type) (`EOPNOTSUPP`).
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// Connection reset by peer (`ECONNRESET`).
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// Timed out (`ETIMEDOUT`).
    public static let timedOut = Errno(rawValue: ETIMEDOUT)
    /// Connection refused: nothing listens at the socket (`ECONNREFUSED`).
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    /// The socket is not connected (`ENOTCONN`).
    public static let notConnected = Errno(rawValue: ENOTCONN)
    /// Operation now in progress (`EINPROGRESS`).
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// Operation already in progress; for sd-bus: a name this connection owns already (`EALREADY`).
    public static let alreadyInProgress = Errno(rawValue: EALREADY)
    /// Bad message: a reply of another shape than expected (`EBADMSG`).
    public static let badMessage = Errno(rawValue: EBADMSG)
    /// Protocol error: a peer broke its protocol (`EPROTO`).
    public static let protocolError = Errno(rawValue: EPROTO)
    /// Disk quota exceeded; for keys: the owner's key quota is full (`EDQUOT`).
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// Required key not available: not found, or invalidated (`ENOKEY`).
    public static let noKey = Errno(rawValue: ENOKEY)
    /// The key has expired (`EKEYEXPIRED`).
    public static let keyExpired = Errno(rawValue: EKEYEXPIRED)
    /// The key has been revoked (`EKEYREVOKED`).
    public static let keyRevoked = Errno(rawValue: EKEYREVOKED)
    /// The key was rejected by the service (`EKEYREJECTED`).
    public static let keyRejected = Errno(rawValue: EKEYREJECTED)
    /// Message too long: a payload larger than the buffer or the type allows (`EMSGSIZE`).
    public static let messageTooLong = Errno(rawValue: EMSGSIZE)
    /// `ENOPROTOOPT`: the kernel does not know the socket option.
    public static let noProtocolOption = Errno(rawValue: ENOPROTOOPT)
    /// `ECONNABORTED`: a connection was aborted before it was accepted.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
}

extension Errno: CustomStringConvertible {
    /// The symbolic name and the C library's message, e.g. `ENOKEY (Required key not available)`.
    public var description: String {
        "\(name) (\(String(cString: strerror(rawValue))))"
    }

    /// The symbolic name of the code, e.g. `EKEYREVOKED`.
    public var name: String {
        switch rawValue {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case ESRCH: "ESRCH"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case EBADF: "EBADF"
        case ECHILD: "ECHILD"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EFAULT: "EFAULT"
        case EEXIST: "EEXIST"
        case ENOTDIR: "ENOTDIR"
        case EINVAL: "EINVAL"
        case ENFILE: "ENFILE"
        case EMFILE: "EMFILE"
        case ELOOP: "ELOOP"
        case EPIPE: "EPIPE"
        case ERANGE: "ERANGE"
        case ENAMETOOLONG: "ENAMETOOLONG"
        case ENOSYS: "ENOSYS"
        case EOPNOTSUPP: "EOPNOTSUPP"
        case ECONNRESET: "ECONNRESET"
        case ETIMEDOUT: "ETIMEDOUT"
        case ECONNREFUSED: "ECONNREFUSED"
        case ENOTCONN: "ENOTCONN"
        case EINPROGRESS: "EINPROGRESS"
        case EALREADY: "EALREADY"
        case EBADMSG: "EBADMSG"
        case EPROTO: "EPROTO"
        case EDQUOT: "EDQUOT"
        case ENOKEY: "ENOKEY"
        case EKEYEXPIRED: "EKEYEXPIRED"
        case EKEYREVOKED: "EKEYREVOKED"
        case EKEYREJECTED: "EKEYREJECTED"
        case EMSGSIZE: "EMSGSIZE"
        case ENOPROTOOPT: "ENOPROTOOPT"
        case ECONNABORTED: "ECONNABORTED"
        case ENOTSOCK: "ENOTSOCK"
        default: "errno \(rawValue)"
        }
    }
}
