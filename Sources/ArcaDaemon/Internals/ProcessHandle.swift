import ArcaSystem
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A handle on one process that stays true to it when its pid is reused: a
/// pidfd (from the connection, `SO_PEERPIDFD`, or `pidfd_open` on Linux 5.3), else
/// the pid and its start time from `/proc/<pid>/stat`. Used to end a PAM session whose opener died
/// without closing it (SIGKILL, a crash).
// @unchecked: immutable after init; the pidfd is only polled and closed in deinit.
final class ProcessHandle: @unchecked Sendable {
    /// The process id, for logs.
    let pid: Int32
    /// The pidfd, or -1 on a kernel without `pidfd_open`.
    private let pidfd: Int32
    /// The start time (clock ticks after boot) the process had when it was seen first.
    private let startTime: UInt64?
    /// The process was gone already when the handle was made.
    private let goneAtOpen: Bool

    private init(pid: Int32, pidfd: Int32, startTime: UInt64?, goneAtOpen: Bool = false) {
        self.pid = pid
        self.pidfd = pidfd
        self.startTime = startTime
        self.goneAtOpen = goneAtOpen
    }

    deinit { if pidfd >= 0 { close(pidfd) } }

    /// A handle on process `pid`, which had `startTime` when it connected (nil:
    /// unknown, trust the pid). When that process is gone already, the handle
    /// says so at once. The corresponding C function is `pidfd_open` (its
    /// descriptors are close-on-exec).
    static func open(pid: Int32, startTime: UInt64?) -> ProcessHandle {
        let gone = ProcessHandle(pid: pid, pidfd: -1, startTime: nil, goneAtOpen: true)
        guard pid > 0 else { return gone }
        let fd = pidfd_open(pid, 0)
        let unsupported = fd < 0 && errno == ENOSYS
        guard fd >= 0 || unsupported else { return gone }
        // The pid may have been reused between the connection and now: the start
        // time read after pidfd_open names the process the pidfd holds.
        let now = Self.startTime(of: pid)
        if let startTime, now != startTime {
            if fd >= 0 { close(fd) }
            return gone
        }
        if fd < 0 && now == nil { return gone }
        return ProcessHandle(pid: pid, pidfd: fd, startTime: now ?? startTime)
    }

    /// A handle on the process a pidfd names (the handle closes it).
    static func adopting(pidfd: FileDescriptor, pid: Int32) -> ProcessHandle {
        ProcessHandle(pid: pid, pidfd: pidfd.rawValue, startTime: nil)
    }

    /// A handle on a process that is gone already.
    static func gone(pid: Int32) -> ProcessHandle {
        ProcessHandle(pid: pid, pidfd: -1, startTime: nil, goneAtOpen: true)
    }

    /// Whether the process has exited (a zombie counts as exited). The
    /// corresponding C function is `poll` on the pidfd.
    var hasExited: Bool {
        if goneAtOpen { return true }
        if pidfd >= 0 {
            var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            let n = poll(&entry, 1, 0)
            return n > 0
        }
        guard let now = Self.startTime(of: pid, ignoringZombies: true) else { return true }
        return startTime.map { $0 != now } ?? false
    }

    /// The logind session `pid` belongs to (from its cgroup, `session-ID.scope`); nil
    /// outside any session or without systemd: ``CgroupSession``, which reads what
    /// `sd_pid_get_session` reads with one `open`/`read`/`close`.
    static func logindSession(of pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        return CgroupSession.session(of: pid)
    }

    /// Field 22 of `/proc/<pid>/stat` (start time in clock ticks after boot);
    /// nil when the process does not exist (or, with `ignoringZombies`, is a zombie).
    static func startTime(of pid: Int32, ignoringZombies: Bool = false) -> UInt64? {
        ProcessStartTime.of(pid: UInt32(bitPattern: pid), ignoringZombies: ignoringZombies)
    }
}
