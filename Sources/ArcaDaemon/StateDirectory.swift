import ArcaCrypto
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// arcad's state directory: `users/<uid>.db` vaults, `sync/<uid>.identity`, `system.db`, `host.key`,
/// `arcad.lock`. Directories are 0700 and files 0600, owned by root (by arcad's
/// effective uid: an arcad run unprivileged, as the in-process tests do, owns its own).
///
/// Whatever arcad finds there it checks before use, without following symlinks:
/// a directory or file owned by another uid, writable by group or others, or a
/// symlink, is refused with a message naming it. Whoever could swap or write one
/// of them could make arcad read a vault or host key of their choosing, or write
/// root's vaults where they point.
enum StateDirectory {
    /// Creates `path` and `path/users` (0700) or checks the existing ones, and
    /// tightens them to 0700 (vault names are uids).
    static func prepare(_ path: String) throws(HandlerError) {
        for directory in [path, "\(path)/users", "\(path)/sync"] {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw HandlerError(.notAvailable, "cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            try checked(directory, what: "state directory") { fd, status throws(HandlerError) in
                guard status.isDirectory else { throw refusal(directory, "is not a directory") }
                guard status.permissions & 0o077 != 0 else { return }
                do { try FileSystem.setPermissions(fd, 0o700) } catch {
                    throw HandlerError(.notAvailable, "cannot tighten \(directory) to 0700: \(error)")
                }
            }
        }
    }

    /// Whether `path` exists, after checking it is a regular file owned by arcad's uid and
    /// not writable by group or others (a symlink is refused, not followed).
    static func existingFile(_ path: String) throws(HandlerError) -> Bool {
        let found: FileDescriptor.Status?
        do { found = try FileSystem.status(path: path) } catch {
            throw HandlerError(.notAvailable, "cannot inspect \(path): \(error)")
        }
        guard let found else { return false }
        try check(path, found)
        guard found.isRegularFile else { throw refusal(path, "is not a regular file") }
        return true
    }

    /// Opens `path` without following symlinks and checks the opened file itself
    /// (fstat: no window between the check and the use), then runs `body`.
    private static func checked<R>(
        _ path: String, what: String, flags: Int32 = O_RDONLY | O_DIRECTORY,
        _ body: (Int32, FileDescriptor.Status) throws(HandlerError) -> R
    ) throws(HandlerError) -> R {
        let fd: Int32
        do { fd = try FileSystem.open(path, flags) } catch let error
            where error.errno == .tooManySymbolicLinks || error.errno == .notDirectory
        {
            // O_NOFOLLOW with O_DIRECTORY fails a symlink with ENOTDIR, not ELOOP.
            let isLink = (try? FileSystem.status(path: path))??.isSymbolicLink ?? false
            throw refusal(path, isLink || error.errno == .tooManySymbolicLinks ? "is a symlink" : "is not a directory")
        } catch {
            throw HandlerError(.notAvailable, "cannot open \(what) \(path): \(error)")
        }
        defer { close(fd) }
        let status: FileDescriptor.Status
        do { status = try FileSystem.status(fd) } catch {
            throw HandlerError(.notAvailable, "cannot stat \(path): \(error)")
        }
        try check(path, status)
        return try body(fd, status)
    }

    /// The rule every directory and file of the state directory follows.
    private static func check(_ path: String, _ status: FileDescriptor.Status) throws(HandlerError) {
        if status.isSymbolicLink { throw refusal(path, "is a symlink") }
        if status.owner != geteuid() { throw refusal(path, "is owned by uid \(status.owner), not \(ownerName)") }
        if status.permissions & 0o022 != 0 {
            let mode = String(status.permissions, radix: 8)
            throw refusal(path, "is writable by group or others (mode \(mode))")
        }
    }

    private static func refusal(_ path: String, _ why: String) -> HandlerError {
        let chown = geteuid() == 0 ? "root" : String(geteuid())
        return HandlerError(
            .notAvailable, "refusing \(path): it \(why); it must be \(ownerName)'s own (chown \(chown), chmod go-w)")
    }

    /// Who must own everything here: arcad's effective uid, root in production.
    private static var ownerName: String { geteuid() == 0 ? "root" : "uid \(geteuid())" }

    // MARK: Single instance

    /// Takes the exclusive lock of the state directory (`flock` on `arcad.lock`)
    /// for the life of the process, and records this process's pid in it. A
    /// second arcad on the same directory is refused with the holder's pid.
    static func lock(_ directory: String) throws(HandlerError) -> StateLock {
        let path = "\(directory)/arcad.lock"
        let fd: Int32
        do { fd = try FileSystem.open(path, O_RDWR | O_CREAT) } catch let error
            where error.errno == .tooManySymbolicLinks
        {
            throw refusal(path, "is a symlink")
        } catch {
            throw HandlerError(.notAvailable, "cannot open \(path): \(error)")
        }
        do {
            let status = try FileSystem.status(fd)
            try check(path, status)
            guard status.isRegularFile else { throw refusal(path, "is not a regular file") }
            guard try FileSystem.tryLockExclusive(fd) else {
                let text = String(decoding: (try? FileSystem.readPrefix(fd, limit: 32)) ?? [], as: UTF8.self)
                let pid = Int32(text.trimmingWhitespace()).map { "pid \($0)" } ?? "pid unknown"
                throw HandlerError(.notAvailable, "another arcad (\(pid)) is using the state directory \(directory)")
            }
            let lock = StateLock(fd: fd)
            lock.recordOwner()
            return lock
        } catch let error as HandlerError {
            close(fd)
            throw error
        } catch {
            close(fd)
            throw HandlerError(.notAvailable, "cannot lock \(path): \(error)")
        }
    }

    // MARK: Host key

    /// The host secret, created (32 random bytes, 0600) on first start. It keys the
    /// ThisDeviceOnly classes and the system vault, so a copied vault cannot open
    /// them elsewhere. Created atomically (temporary file, fsync, rename, fsync of
    /// the directory): a crash leaves either no host.key or a whole one.
    static func hostSecret(in directory: String) throws(HandlerError) -> SecretBytes {
        let path = "\(directory)/host.key"
        if try existingFile(path) {
            return try readHostSecret(path)
        }
        // A new host key could never open the existing system vault: say so, rather
        // than replace the lost key and fail later.
        if try existingFile("\(directory)/system.db") {
            throw HandlerError(.notAvailable, "\(directory)/system.db exists but \(path) is missing; restore host.key")
        }
        return try createHostSecret(path, directory: directory)
    }

    static let hostSecretLength = 32

    private static func readHostSecret(_ path: String) throws(HandlerError) -> SecretBytes {
        try checked(path, what: "host key", flags: O_RDONLY) { fd, status throws(HandlerError) -> SecretBytes in
            guard status.isRegularFile else { throw refusal(path, "is not a regular file") }
            // A secret readable by others is no longer a secret; say so rather than use it.
            guard status.permissions & 0o077 == 0 else {
                throw refusal(path, "is readable by group or others (mode \(String(status.permissions, radix: 8)))")
            }
            guard status.size == hostSecretLength else {
                throw HandlerError(.decode, "\(path) is damaged (expected \(hostSecretLength) bytes)")
            }
            do {
                return try SecretBytes(count: hostSecretLength) { buffer in
                    guard try FileSystem.readExactly(fd, into: buffer) else {
                        throw HandlerError(.decode, "\(path) is damaged (expected \(hostSecretLength) bytes)")
                    }
                }
            } catch let error as HandlerError {
                throw error
            } catch {
                throw HandlerError(.notAvailable, "cannot read \(path): \(error)")
            }
        }
    }

    private static func createHostSecret(_ path: String, directory: String) throws(HandlerError) -> SecretBytes {
        do {
            let secret = try SecretBytes.random(count: hostSecretLength)
            try writeAtomically(path, directory: directory) { fd in
                try secret.withUnsafeBytes { try FileSystem.writeAll(fd, $0) }
            }
            return secret
        } catch {
            throw HandlerError(.notAvailable, "cannot create \(path): \(error)")
        }
    }

    /// Writes `path` (0600) through a temporary file (`fill` writes the content), fsync and
    /// rename, then fsyncs `directory`, so a crash leaves the old content or the new, never a
    /// mix. A temporary file left by an earlier crash is replaced.
    static func writeAtomically(_ path: String, directory: String, _ fill: (Int32) throws -> Void) throws {
        let temporary = path + ".tmp"
        do {
            try FileSystem.removeIfPresent(temporary)
            let fd = try FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            do {
                defer { close(fd) }
                try fill(fd)
                try FileSystem.sync(fd)
            }
            try FileSystem.rename(temporary, path)
            try FileSystem.syncDirectory(directory)
        } catch {
            try? FileSystem.removeIfPresent(temporary)
            throw error
        }
    }
}

/// The exclusive lock on a state directory, held until the process exits (the
/// descriptor is never closed: closing it would release the lock).
public final class StateLock: Sendable {
    private let fd: Int32

    fileprivate init(fd: Int32) { self.fd = fd }

    /// Writes this process's pid into the lock file; called again after arcad
    /// detaches, when the pid changes. The lock (an open file description) is
    /// inherited across fork.
    public func recordOwner() {
        try? FileSystem.replaceContent(fd, with: Array("\(getpid())\n".utf8))
    }
}
