import ArcaClient
import ArcaProtocol
import CPAM

/// Why the module could not do its part. None of these fails a login.
public enum ModuleError: Error, Equatable {
    /// `PAM_USER` is not set.
    case noUser
    /// The user is unknown to the system (`getpwnam_r`).
    case unknownUser(String)
    /// arcad could not be reached, timed out or sent garbage.
    case arcadUnavailable(ClientError)
    /// arcad answered a request with an error.
    case arcadRefused(request: MessageKind, status: ArcaStatus, message: String)
    /// arcad answered with a reply that does not belong to the request.
    case unexpectedReply(request: MessageKind, reply: MessageKind)
    /// arcad sent KDF parameters this module will not use.
    case unusableParameters(String)
    /// Argon2id, calibration or secure (mlocked) memory failed.
    case crypto(String)
    /// `pam_set_data` failed: the key cannot be kept for open_session.
    case stashFailed

    /// The one mapping of module failures to a ``PAMResult``: every failure is
    /// `PAM_IGNORE` (the login goes on without Arca) and one syslog line.
    /// Documented in pam_arca(8), RETURN VALUES.
    public var outcome: (result: PAMResult, priority: LogPriority, message: String) {
        switch self {
        case .noUser:
            return (.ignore, .error, "no PAM_USER")
        case .unknownUser(let name):
            return (.ignore, .error, "unknown user \(name)")
        case .arcadUnavailable(let error):
            return (.ignore, .error, "\(error)")
        case .arcadRefused(let request, let status, let message):
            return (.ignore, .error, "arcad refused \(request) (\(status.rawValue)): \(message)")
        case .unexpectedReply(let request, let reply):
            return (.ignore, .error, "arcad answered \(request) with \(reply)")
        case .unusableParameters(let why):
            return (.ignore, .error, "unusable KDF parameters from arcad: \(why)")
        case .crypto(let why):
            return (.ignore, .error, "key derivation failed: \(why)")
        case .stashFailed:
            return (.ignore, .error, "pam_set_data failed")
        }
    }
}
