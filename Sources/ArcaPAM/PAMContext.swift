import ArcaCrypto

/// A non-secret PAM item the module reads.
public enum PAMTextItem: Sendable {
    /// `PAM_SERVICE`.
    case service
    /// `PAM_USER` (read, never prompted for).
    case user
    /// `PAM_TTY`.
    case tty
    /// `PAM_RHOST`.
    case remoteHost
    /// `PAM_RUSER`.
    case remoteUser
}

/// A secret PAM item: copied straight from libpam's memory into `SecretBytes`.
public enum PAMSecretItem: Sendable {
    /// `PAM_AUTHTOK`: the password (or the new one, in chauthtok).
    case authToken
    /// `PAM_OLDAUTHTOK`: the old password, in chauthtok.
    case oldAuthToken
}

/// Syslog priorities the module uses.
public enum LogPriority: Sendable {
    /// `LOG_ERR`: a failure (the login still goes on).
    case error
    /// `LOG_NOTICE`: a configuration problem, e.g. an unknown argument.
    case notice
    /// `LOG_INFO`: a success (silenced by `quiet`).
    case info
    /// `LOG_DEBUG`: a step (only with `debug`).
    case debug
}

/// Everything the module needs from libpam and the process: the live
/// implementation wraps a `pam_handle_t`, tests use an in-memory twin.
public protocol PAMContext: AnyObject {
    /// A PAM item as text, or `nil` when unset.
    func item(_ item: PAMTextItem) -> String?
    /// A secret item copied into mlocked memory (SecretBytes), or `nil` when unset or empty.
    func secretItem(_ item: PAMSecretItem) -> SecretBytes?
    /// The uid of a user name (`getpwnam_r`), or `nil` when unknown.
    func uid(ofUser name: String) -> UInt32?
    /// `geteuid()`: not 0 when a screen locker runs the module as the user.
    var effectiveUID: UInt32 { get }
    /// Keeps a copy of `value` with the handle (`pam_set_data`) until
    /// replaced, removed or `pam_end`, which zeroes it. Returns false on failure.
    func stash(_ value: SecretBytes, name: String) -> Bool
    /// A copy of what `name` holds (`pam_get_data`), or `nil`.
    func stashed(name: String) -> SecretBytes?
    /// Drops and zeroes what `name` holds.
    func removeStash(name: String)
    /// One syslog line (`pam_syslog`). Never pass a secret.
    func log(_ priority: LogPriority, _ message: String)
}
