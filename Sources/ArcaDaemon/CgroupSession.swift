import ArcaSystem
import Synchronization

/// The logind session of a process, read from its cgroup as libsystemd's
/// `sd_pid_get_session` reads it, with one plain read of `/proc/PID/cgroup`. libsystemd
/// also reads `/proc/1/cgroup` on every call, both files through stdio (which probes each
/// for a terminal); PID 1's root is read once here. Both cache the layout (`statfs` of
/// `/sys/fs/cgroup`), libsystemd per thread.
///
/// The steps are systemd's (`cg_unified_cached`, `cg_pid_get_path`, `cg_shift_path`,
/// `cg_path_get_session`): the path in the hierarchy systemd tracks units in (the unified
/// `0::` line when `/sys/fs/cgroup` is cgroup2, or tmpfs with a cgroup2 `unified` or
/// `systemd` below it; else the `name=systemd` line of cgroup v1); minus the root PID 1
/// lies in (its own path without `/init.scope`); past the leading `.slice` components,
/// the first unit, which must be `session-ID.scope` with an ID of letters and digits.
enum CgroupSession {
    /// PID 1's root, read on first use and kept: systemd moves itself into `init.scope`
    /// early in boot, before any service (arcad) starts, and never leaves it; a container's
    /// PID 1 is placed before it runs; and arcad's cgroup namespace, through which the path
    /// is seen, is fixed for its life. Not kept when it could not be read.
    private static let rootPath = Mutex<String?>(nil)
    /// Which line systemd reads, decided once: the mounts under `/sys/fs/cgroup` are made at
    /// boot, before arcad starts. Nil when neither layout is there (no systemd: no session).
    private static let unified: Bool? = unifiedLayout(
        top: FileSystemType.of("/sys/fs/cgroup/"), unified: FileSystemType.of("/sys/fs/cgroup/unified/"),
        systemd: FileSystemType.of("/sys/fs/cgroup/systemd/"))

    /// The session of process `pid`, or nil (no session, no such process, no systemd).
    static func session(of pid: Int32) -> String? {
        guard let unified, let file = ProcFile.contents(of: "/proc/\(pid)/cgroup"),
            let path = systemdPath(in: file, unified: unified), let root = pid1Root(unified: unified)
        else { return nil }
        return session(inPath: shifted(path, below: root))
    }

    private static func pid1Root(unified: Bool) -> String? {
        if let root = rootPath.withLock({ $0 }) { return root }
        guard let file = ProcFile.contents(of: "/proc/1/cgroup"), let path = systemdPath(in: file, unified: unified)
        else { return nil }
        let root = self.root(ofPID1Path: path)
        rootPath.withLock { $0 = root }
        return root
    }

    /// Whether systemd tracks units in the unified hierarchy, from the file system types at
    /// `/sys/fs/cgroup`, `…/unified` and `…/systemd` (`cg_unified_cached`); nil for neither.
    static func unifiedLayout(top: Int?, unified: Int?, systemd: Int?) -> Bool? {
        switch top {
        case FileSystemType.cgroup2: return true
        case FileSystemType.tmpfs:
            if unified == FileSystemType.cgroup2 || systemd == FileSystemType.cgroup2 { return true }
            return systemd == FileSystemType.cgroup1 ? false : nil
        default: return nil
        }
    }

    /// The path in a `/proc/PID/cgroup` file of the hierarchy systemd tracks units in: the
    /// `0::PATH` line (`unified`), else the `N:name=systemd:PATH` line.
    static func systemdPath(in file: [UInt8], unified: Bool) -> String? {
        for line in file.split(separator: UInt8(ascii: "\n")) {
            // "ID:CONTROLLERS:PATH"; the path may itself hold ':'.
            let fields = line.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let found =
                unified
                ? fields[0].elementsEqual("0".utf8) && fields[1].isEmpty
                : fields[1].split(separator: UInt8(ascii: ",")).contains { $0.elementsEqual("name=systemd".utf8) }
            guard found else { continue }
            // A zombie's path ends in " (deleted)", which systemd strips.
            let path = String(decoding: fields[2], as: UTF8.self)
            return path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
        }
        return nil
    }

    /// The root below which PID 1 lives: its path without `/init.scope` (or the older
    /// `/system.slice`, `/system`); empty for the top.
    static func root(ofPID1Path path: String) -> String {
        for suffix in ["/init.scope", "/system.slice", "/system"] where path.hasSuffix(suffix) {
            return String(path.dropLast(suffix.count))
        }
        return path
    }

    /// `path` relative to `root` (keeping its leading '/') when it lies below it, by
    /// whole components; else `path` unchanged.
    static func shifted(_ path: String, below root: String) -> String {
        let rootParts = root.split(separator: "/")
        guard root.hasPrefix("/"), !rootParts.isEmpty else { return path }
        let parts = path.split(separator: "/")
        guard path.hasPrefix("/"), parts.count >= rootParts.count, parts.starts(with: rootParts) else { return path }
        return "/" + parts.dropFirst(rootParts.count).joined(separator: "/")
    }

    /// `ID` when the first unit in `path` past its leading slices is `session-ID.scope`.
    static func session(inPath path: String) -> String? {
        var parts = path.split(separator: "/")[...]
        while let first = parts.first, isSlice(first) { parts = parts.dropFirst() }
        guard var unit = parts.first, unit.count >= 3 else { return nil }
        if unit.hasPrefix("_") { unit = unit.dropFirst() }  // systemd's cgroup escaping
        // A unit name is at most 255 bytes (UNIT_NAME_MAX - 1): a longer one is no session.
        guard unit.hasPrefix("session-"), unit.hasSuffix(".scope"), unit.utf8.count <= 255 else { return nil }
        let id = unit.dropFirst("session-".count).dropLast(".scope".count)
        guard !id.isEmpty, id.utf8.allSatisfy({ isLetterOrDigit($0) }) else { return nil }
        return String(id)
    }

    /// A component systemd skips as a slice: a valid unit name ending in `.slice`.
    private static func isSlice(_ component: Substring) -> Bool {
        var name = component
        if name.hasPrefix("_") { name = name.dropFirst() }
        guard name.hasSuffix(".slice"), name.count > ".slice".count, name.utf8.count <= 255 else { return false }
        return name.utf8.allSatisfy { isLetterOrDigit($0) || ":-_.\\".utf8.contains($0) }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }
}
