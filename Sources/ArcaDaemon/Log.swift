import ArcaSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// arcad's log: syslog (facility authpriv) when running as a daemon, stderr in
/// the foreground. Messages never contain secrets: callers pass uids, request
/// kinds and status codes, never payloads.
public enum Log {
    /// Severity, with syslog's numbers.
    public enum Level: Int32, Sendable, Comparable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var name: String {
            switch self {
            case .error: "error"
            case .warning: "warning"
            case .notice: "notice"
            case .info: "info"
            case .debug: "debug"
            }
        }
    }

    private struct Settings: Sendable {
        var toStderr = true
        var threshold = Level.info
    }

    private static let settings = Mutex(Settings())
    /// Messages already logged once (for `once`).
    private static let said = Mutex(Set<String>())

    /// Sends the log to syslog (`foreground == false`) or stderr.
    public static func configure(foreground: Bool, verbose: Bool) {
        settings.withLock {
            $0.toStderr = foreground
            $0.threshold = verbose ? .debug : .info
        }
        if !foreground { openlog("arcad", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV) }
    }

    /// Logs one line.
    public static func log(_ level: Level, _ message: @autoclosure () -> String) {
        let (toStderr, threshold) = settings.withLock { ($0.toStderr, $0.threshold) }
        guard level <= threshold else { return }
        let text = message()
        if toStderr {
            try? FileDescriptor.standardError.writeAll("arcad: \(level.name): \(text)\n")
        } else {
            text.withCString { syslogMessage(level.rawValue, $0) }
        }
    }

    /// Logs a line only the first time this exact text is seen.
    public static func once(_ level: Level, _ message: String) {
        guard said.withLock({ $0.insert(message).inserted }) else { return }
        log(level, message)
    }

    public static func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public static func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public static func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public static func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public static func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }

    private static func syslogMessage(_ priority: Int32, _ text: UnsafePointer<CChar>) {
        // "%s" so that a '%' in the text is never read as a format directive.
        withVaList([text]) { vsyslog(priority, "%s", $0) }
    }
}
