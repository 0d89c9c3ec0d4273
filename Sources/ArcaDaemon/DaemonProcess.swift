import ArcaKeyring

#if canImport(Glibc)
import Glibc
#endif

/// Process-level set-up of arcad.
public enum DaemonProcess {
    /// Joins a new anonymous session keyring, so that keys arcad handles never sit
    /// in a session keyring it inherited (and shares) from whoever started it, and
    /// links root's user keyring into it (as pam_keyinit does), so that arcad
    /// possesses the ring where it parks held keys across restarts.
    public static func isolateKeyrings() {
        do {
            _ = try KeySerial.joinSessionKeyring(named: nil)
            try KeySerial.userKeyring.link(into: .sessionKeyring)
        } catch {
            Log.warning("cannot join a private session keyring: \(error)")
        }
    }

    /// Detaches from the terminal: fork (the parent exits 0), new session, `/` as
    /// working directory, standard streams on /dev/null. Call before any thread starts.
    public static func daemonize() {
        let pid = fork()
        if pid < 0 { Log.error("fork: \(String(cString: strerror(errno)))"); exit(1) }
        if pid > 0 { _exit(0) }
        setsid()
        _ = chdir("/")
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, 0)
            dup2(null, 1)
            dup2(null, 2)
            if null > 2 { close(null) }
        }
    }

    /// Runs `body` every `seconds` on a background thread, forever.
    public static func every(seconds: Int, _ body: @escaping @Sendable () -> Void) {
        do {
            try Threads.detach {
                while true {
                    sleep(UInt32(seconds))
                    body()
                }
            }
        } catch {
            Log.error("cannot start the timer thread: \(error)")
        }
    }
}
