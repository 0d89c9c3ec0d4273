/// Everything that can go wrong in the fleet layer. `arca-fleetd` maps it to an exit
/// status in one switch (`FleetError.exitCode`), documented in arca-fleetd(8).
public enum FleetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A bad command line or configuration.
    case usage(String)
    /// etcd could not be reached, had no quorum, or refused the request.
    case etcd(String)
    /// Another admin changed the fleet between our read and our write.
    case conflict
    /// A record failed verification: bad signature, wrong kind, rollback, replay, expiry.
    case verification(String)
    /// A local cryptographic failure (never caused by input).
    case crypto(String)
    /// arcad refused or could not be reached.
    case arcad(String)
    /// What was asked for does not exist (host, item, fleet).
    case notFound(String)
    /// Already there (fleet initialised, item exists).
    case exists(String)

    public var description: String {
        switch self {
        case .usage(let text): text
        case .etcd(let text): "etcd: \(text)"
        case .conflict: "another admin changed the fleet since it was read; nothing was written, try again"
        case .verification(let text): "rejected: \(text)"
        case .crypto(let text): "crypto: \(text)"
        case .arcad(let text): "arcad: \(text)"
        case .notFound(let text): "not found: \(text)"
        case .exists(let text): "already exists: \(text)"
        }
    }

    /// The process exit status for this error (arca-fleetd(8), EXIT STATUS).
    public var exitCode: Int32 {
        switch self {
        case .usage: 2
        case .etcd: 3
        case .conflict: 4
        case .verification: 5
        case .arcad: 6
        case .notFound: 7
        case .exists: 8
        case .crypto: 1
        }
    }
}
