/// Errors of the keyring layer. None of them carries secret material.
public enum KeyringError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A keyring system call failed with `errno`; `operation` names the C call.
    case system(KeyringErrno, operation: String)
    /// The kernel has no key management (`ENOSYS`): Arca serves items over the socket only.
    case noKernelSupport
    /// The child that acts with a user's real uid died or was killed (signal number, or 0).
    case helperFailed(uid: UInt32, signal: Int32)
    /// A kernel file (`/proc/key-users`, `/proc/sys/kernel/keys/…`) could not be read or parsed.
    case procfs(path: String)
    /// Keys arcad made could not all be destroyed: `remaining` are still in the kernel.
    case notDestroyed(remaining: Int)

    /// The one mapping from a raw errno to this enum.
    static func from(_ code: KeyringErrno, operation: String) -> KeyringError {
        code == .noKernelSupport ? .noKernelSupport : .system(code, operation: operation)
    }

    /// The errno behind the error, if it came from a system call.
    public var errno: KeyringErrno? {
        switch self {
        case .system(let code, _): code
        case .noKernelSupport: .noKernelSupport
        case .helperFailed, .procfs, .notDestroyed: nil
        }
    }

    /// A one-line message for logs and `arca status`.
    public var description: String {
        switch self {
        case .system(let code, let operation): "\(operation): \(code)"
        case .noKernelSupport: "this kernel has no keyring support (ENOSYS)"
        case .helperFailed(let uid, let signal):
            "the helper acting as uid \(uid) died" + (signal == 0 ? "" : " (signal \(signal))")
        case .procfs(let path): "cannot read \(path)"
        case .notDestroyed(let remaining): "\(remaining) kernel keys could not be destroyed"
        }
    }
}

/// Runs one keyring call and maps its raw errno to `KeyringError` (ENOSYS becomes
/// `.noKernelSupport`).
@inline(__always)
func mapped<R>(_ operation: String, _ body: () throws(KeyringErrno) -> R) throws(KeyringError) -> R {
    do { return try body() } catch { throw KeyringError.from(error, operation: operation) }
}
