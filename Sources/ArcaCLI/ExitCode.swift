import ArcaClient
import ArcaProtocol

/// The exit statuses of `arca`, documented in arca(1) (EXIT STATUS).
public enum ExitCode: Int32, Sendable, CaseIterable {
    /// Success.
    case ok = 0
    /// Any other failure (wrong password, damaged data, a system call…).
    case error = 1
    /// The command line is wrong.
    case usage = 2
    /// No item matched (`errSecItemNotFound`; 44 as macOS `security`).
    case notFound = 44
    /// The item already exists (`errSecDuplicateItem`; 45 as `security`).
    case duplicate = 45
    /// The vault or the item's class is locked (`errSecInteractionNotAllowed`); never "not found".
    case locked = 46
    /// The caller may not do this (`errSecMissingEntitlement`).
    case notAllowed = 47
    /// The vault is at its size limit (`errSecQuotaExceeded`).
    case vaultFull = 48
    /// A lock could not destroy every kernel key (`errSecInternalComponent`): not locked.
    case lockIncomplete = 49
    /// arcad is not running: nothing accepts connections at its socket (`errSecNotAvailable`; EX_UNAVAILABLE).
    case notRunning = 69
    /// arcad is running but cannot serve the request now: busy deriving keys for
    /// this user, refusing the connection, or not answering in time (EX_TEMPFAIL).
    case busy = 75
}

/// Why a command failed. Printed as one line, `arca: <what>: <why>`.
public enum CLIError: Error, Sendable, Equatable {
    /// The command line is wrong (printed as `error: …` and the usage line).
    case usage(UsageError)
    /// arcad, or the client library, answered with a status other than success.
    case status(ArcaStatus, what: String, detail: String)
    /// arcad is there but did not serve the request (it said it cannot now, closed
    /// the connection, or did not answer in time): never reported as not running.
    case busy(what: String, detail: String)
    /// Anything else: the exit status is 1.
    case failure(what: String, why: String)

    /// The one mapping from a failed request to arcad: a connection that could
    /// not be made means arcad is not running; one that arcad accepted and then
    /// dropped or left unanswered means it is busy; other client errors keep their status.
    public static func request(_ error: ClientError, what: String) -> CLIError {
        switch error {
        case .timedOut, .connectionClosed: return .busy(what: what, detail: error.description)
        case .notRunning, .malformedReply, .invalidRequest, .system:
            return .status(error.status, what: what, detail: error.description)
        }
    }

    /// The one mapping from an error reply of arcad: `errSecNotAvailable` from a
    /// running arcad (busy deriving keys, its state unusable) is busy, with arcad's reason.
    public static func reply(_ status: ArcaStatus, message: String, what: String) -> CLIError {
        switch status {
        case .notAvailable:
            return .busy(what: what, detail: message.isEmpty ? "arcad cannot serve this now; try again" : message)
        // Only the codes whose text says nothing by itself carry arcad's message.
        case .param, .decode, .quotaExceeded, .internalComponent, .bufferTooSmall:
            return .status(status, what: what, detail: message)
        case .success, .authFailed, .duplicateItem, .itemNotFound, .interactionNotAllowed, .missingEntitlement:
            return .status(status, what: what, detail: "")
        }
    }

    /// The one mapping from an error to the exit status.
    public var exitCode: ExitCode {
        switch self {
        case .usage: return .usage
        case .failure: return .error
        case .busy: return .busy
        case .status(let status, _, _):
            switch status {
            case .success: return .ok
            case .itemNotFound: return .notFound
            case .duplicateItem: return .duplicate
            case .interactionNotAllowed: return .locked
            case .missingEntitlement: return .notAllowed
            case .quotaExceeded: return .vaultFull
            case .internalComponent: return .lockIncomplete
            case .notAvailable: return .notRunning
            case .param, .authFailed, .decode, .bufferTooSmall: return .error
            }
        }
    }

    /// The line printed on stderr (without its newline), for every case but usage.
    public var message: String {
        switch self {
        case .usage(let error): return "error: " + error.message
        case .failure(let what, let why): return "arca: \(what): \(why)"
        case .busy(let what, let detail): return "arca: \(what): \(detail)"
        case .status(let status, let what, let detail):
            let why: String
            switch status {
            case .success: why = "success"
            case .itemNotFound: why = "no such item"
            case .duplicateItem: why = detail.isEmpty ? "the item already exists" : detail
            case .interactionNotAllowed: why = detail.isEmpty ? "locked" : "locked (\(detail))"
            case .missingEntitlement: why = "not allowed"
            case .quotaExceeded: why = "the vault is full" + (detail.isEmpty ? "" : " (\(detail))")
            case .internalComponent: why = "lock incomplete" + (detail.isEmpty ? "" : " (\(detail))")
            case .notAvailable: why = detail.isEmpty ? "arcad is not running" : detail
            case .authFailed: why = detail.isEmpty ? "wrong password" : detail
            case .param: why = "invalid parameter" + (detail.isEmpty ? "" : " (\(detail))")
            case .decode: why = "damaged data" + (detail.isEmpty ? "" : " (\(detail))")
            case .bufferTooSmall: why = detail.isEmpty ? ProtocolLimits.replyTooLargeMessage : detail
            }
            return "arca: \(what): \(why)"
        }
    }
}
