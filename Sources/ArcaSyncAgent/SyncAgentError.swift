/// Why an `arca sync` verb or the agent failed: one enum for this layer, one mapping to exit codes.
public enum SyncAgentError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A bad command line (exit 2).
    case usage(String)
    /// Syncthing's REST API failed or is unreachable (exit 3).
    case syncthing(String)
    /// arcad refused or is unreachable (exit 4).
    case arcad(String)
    /// The synced folder could not be read or written (exit 5).
    case folder(String)
    /// The user declined, the verification code did not match, or the recovery key opened no
    /// recovery seal (exit 6).
    case notConfirmed(String)

    public var description: String {
        switch self {
        case .usage(let m): m
        case .syncthing(let m): "syncthing: \(m)"
        case .arcad(let m): "arcad: \(m)"
        case .folder(let m): "folder: \(m)"
        case .notConfirmed(let m): m
        }
    }

    /// The exit status, documented in arca-sync(1) EXIT STATUS.
    public var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .syncthing: 3
        case .arcad: 4
        case .folder: 5
        case .notConfirmed: 6
        }
    }
}
