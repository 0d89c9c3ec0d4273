import ArcaProtocol
import ArcaVault

/// A refused or failed request: the OSStatus the client sees and a message that
/// names no secret and, for refusals, nothing about other users.
public struct HandlerError: Error, Equatable, Sendable {
    public let status: ArcaStatus
    public let message: String

    public init(_ status: ArcaStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    static func param(_ message: String) -> HandlerError { HandlerError(.param, message) }

    /// The one refusal for "not yours": identical whether or not the other user
    /// or their vault exists.
    static let notAllowed = HandlerError(.missingEntitlement, "not allowed for this caller")

    /// A key or recovery key that does not open the vault.
    static let wrongKey = HandlerError(.authFailed, "wrong password or key")

    /// `confirmCandidate` with a token arcad does not hold for this user (never
    /// given, already used, expired or dropped), or for a session that is not open.
    static let noCandidate = HandlerError(.itemNotFound, "no such candidate key for an open session of this user")

    /// No vault yet for this user.
    static let noVault = HandlerError(
        .interactionNotAllowed, "no vault yet: log in once with pam_arca enabled, or run 'arca init'")

    /// Vault errors keep the vault's own status (`VaultError.status`, the one
    /// mapping); only the message changes: paths stay in arcad's log.
    static func vault(_ error: Error) -> HandlerError {
        guard let error = error as? VaultError else {
            Log.error("unexpected error: \(error)")
            return HandlerError(.decode, "internal error; see arcad's log")
        }
        switch error {
        case .param(let why): return HandlerError(error.status, why)
        case .duplicateItem, .itemNotFound, .locked, .authFailed: return HandlerError(error.status, error.description)
        case .damaged, .unsupportedVersion, .storage:
            Log.error("\(error)")
            return HandlerError(error.status, "the vault cannot be read; see arcad's log")
        case .noSuchVault: return noVault
        case .alreadyExists: return HandlerError(error.status, "a vault already exists")
        }
    }

    var reply: Reply { .error(status: status, message: message) }
}
