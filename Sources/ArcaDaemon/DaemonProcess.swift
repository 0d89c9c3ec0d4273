import ArcaKeyring
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Process-level set-up of arcad.
public enum DaemonProcess {
    /// Creates or checks the state directory (owner root, not writable by group or
    /// others, no symlink) and takes its exclusive lock for the life of the
    /// process, before anything reads state, binds the socket or restores parked
    /// keys: a second arcad on the same directory fails here, naming the holder's
    /// pid, and touches nothing the first one serves.
    public static func claimStateDirectory(_ path: String) throws(HandlerError) -> StateLock {
        try StateDirectory.prepare(path)
        return try StateDirectory.lock(path)
    }

    /// Joins a new anonymous session keyring, so that keys arcad handles never sit
    /// in a session keyring it inherited (and shares) from whoever started it, and
    /// links root's user keyring into it (as pam_keyinit does), so that arcad
    /// possesses the ring where it parks held keys across restarts. Returns whether
    /// the session keyring is arcad's own (only then does arcad keep its hold on users'
    /// `@u` there: `KeyringLayout.init(budget:anchorIn:)`).
    @discardableResult
    public static func isolateKeyrings() -> Bool {
        do {
            _ = try KeySerial.joinSessionKeyring(named: nil)
            try KeySerial.userKeyring.link(into: .sessionKeyring)
            return true
        } catch {
            Log.warning("cannot join a private session keyring: \(error)")
            return false
        }
    }

    /// Detaches from the terminal before anything secret is allocated (mlock does
    /// not survive fork): fork, and the parent waits until the child calls `ready`
    /// and exits 0, or exits 1 if the child dies first, so that a failure to start
    /// still reaches whoever started arcad. The child gets a new session and `/`
    /// as working directory. Returns the descriptor to hand to `ready`.
    public static func detach() -> Int32 {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            Log.error("pipe: \(String(cString: strerror(errno)))")
            exit(1)
        }
        let pid = fork()
        if pid < 0 {
            Log.error("fork: \(String(cString: strerror(errno)))")
            exit(1)
        }
        if pid > 0 {
            close(fds[1])
            var byte: UInt8 = 1
            let n = withUnsafeMutableBytes(of: &byte) { try? FileDescriptor(rawValue: fds[0]).read(into: $0) }
            _exit(n == 1 && byte == 0 ? 0 : 1)
        }
        close(fds[0])
        setsid()
        _ = chdir("/")
        return fds[1]
    }

    /// Tells the waiting parent that arcad started, and moves the standard streams
    /// to /dev/null.
    public static func ready(_ fd: Int32) {
        let byte: UInt8 = 0
        _ = withUnsafeBytes(of: byte) { try? FileDescriptor(rawValue: fd).writeAll($0) }
        close(fd)
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
