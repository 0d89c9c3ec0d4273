import CPAM

/// What a run of the module tells libpam. The module never fails a login, so
/// there are two outcomes; ``code`` is the one place they become PAM's numbers.
public enum PAMResult: Equatable, Sendable {
    /// The module did its part (`PAM_SUCCESS`).
    case success
    /// The module had nothing to do, or failed without failing the login (`PAM_IGNORE`).
    case ignore

    /// The PAM return code, documented in pam_arca(8), RETURN VALUES.
    public var code: Int32 {
        switch self {
        case .success: return Int32(PAM_SUCCESS)
        case .ignore: return Int32(PAM_IGNORE)
        }
    }
}
