import ArcaProtocol

/// The arguments of a `pam_arca.so` line in a PAM service file, as
/// documented in pam_arca(8).
public struct ModuleOptions: Sendable, Equatable {
    /// `debug`: log each step at `LOG_DEBUG`.
    public var debug = false
    /// `quiet`: do not log successes at `LOG_INFO` (failures are always logged).
    public var quiet = false
    /// `socket=PATH`: arcad's socket. The environment (`ARCA_SOCKET`) is
    /// deliberately ignored: in setuid programs (su, sudo) it belongs to the
    /// calling user, who could point root's derived key at a socket of theirs.
    public var socketPath = ArcadSocket.defaultPath
    /// `auto_enroll` / `no_auto_enroll`: create the vault at the first login.
    public var autoEnroll = true
    /// `unlock_in_auth`: unlock during auth, not only in open_session. Always
    /// on when the module runs unprivileged (a screen locker).
    public var unlockInAuth = false
    /// `only_if=SERVICE,…`: act only for these PAM services; `nil` means all.
    public var onlyIf: [String]? = nil
    /// `timeout=MS`: the bound on each exchange with arcad, 1…60000 ms.
    public var timeoutMilliseconds = 3_000

    /// The defaults: every service, auto enrollment, a 3 s timeout.
    public init() {}

    /// Parses the module arguments. Unknown or malformed ones are returned,
    /// not fatal: the caller logs them and goes on with the defaults.
    public static func parse(_ arguments: [String]) -> (options: ModuleOptions, rejected: [String]) {
        var options = ModuleOptions()
        var rejected: [String] = []
        for argument in arguments where !options.apply(argument) {
            rejected.append(argument)
        }
        return (options, rejected)
    }

    /// Applies one module argument; false when it is unknown or malformed (the
    /// options are then unchanged). The PAM entry applies them one by one from
    /// `argv`: no array of strings, whose generic metadata a fresh login process
    /// would instantiate at run time.
    public mutating func apply(_ argument: String) -> Bool {
        let (name, value) = Self.split(argument)
        switch (name, value) {
        case ("debug", nil): debug = true
        case ("quiet", nil): quiet = true
        case ("auto_enroll", nil): autoEnroll = true
        case ("no_auto_enroll", nil): autoEnroll = false
        case ("unlock_in_auth", nil): unlockInAuth = true
        case ("socket", let path?) where path.hasPrefix("/") && path.utf8.count < 108:
            socketPath = path
        case ("only_if", let list?) where !list.isEmpty:
            onlyIf = list.split(separator: ",").map(String.init)
        case ("timeout", let text?):
            guard let ms = Int(text), (1...60_000).contains(ms) else { return false }
            timeoutMilliseconds = ms
        default: return false
        }
        return true
    }

    /// Whether the module acts for `service` (`only_if`).
    public func applies(to service: String?) -> Bool {
        guard let onlyIf else { return true }
        guard let service else { return false }
        return onlyIf.contains(service)
    }

    private static func split(_ argument: String) -> (String, String?) {
        guard let equals = argument.firstIndex(of: "=") else { return (argument, nil) }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
}
