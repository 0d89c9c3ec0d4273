import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import ArcaVault

#if canImport(Glibc)
    import Glibc
#endif

/// The KDF parameters of the vaults arcad has open, published for pam_arca next to the
/// socket (``PublishedKDFParameters``: the format, and the checks pam_arca makes before
/// believing a file), so that a login's auth derives the key without a connection.
///
/// Written when arcad opens or creates a vault, after each change of its parameters
/// (password change, recovery, a pending re-wrap), and again when root asks for them
/// (`kdfParameters`: pam_arca could not believe the copy), when a login's unlock fails and
/// when a login's key came with other parameters (`loginUnlockDerived`: a stale copy),
/// always under the user's lock, so one uid's writes never interleave. Best effort: a
/// failure is logged and the user's file removed, and pam_arca asks arcad instead. Files of an earlier arcad are left: their
/// publisher is gone, so pam_arca ignores them until this arcad rewrites them.
final class KDFPublication: Sendable {
    /// `<socket>.kdf`.
    let directory: String
    private let publisherPID: UInt32
    private let publisherStartTime: UInt64

    /// The publication of the arcad listening on `socketPath`; nil (nothing is published)
    /// when arcad cannot read its own start time in `/proc`.
    init?(socketPath: String) {
        guard let start = ProcessStartTime.current else {
            Log.warning("cannot read arcad's start time in /proc: KDF parameters are not published for pam_arca")
            return nil
        }
        directory = PublishedKDFParameters.directory(socketPath: socketPath)
        publisherPID = UInt32(bitPattern: getpid())
        publisherStartTime = start
    }

    /// Why a publication failed. Logged, never a reply: no request waits on it.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The directory there is not a 0700 directory of arcad's own (another owner,
        /// writable by others, not a directory, a symlink): left as it is.
        case refusedDirectory(String)
        /// A file call failed.
        case system(SystemError)

        var description: String {
            switch self {
            case .refusedDirectory(let path): "\(path) is not a 0700 directory of arcad's own"
            case .system(let error): error.description
            }
        }
    }

    /// Publishes `parameters` as those of `uid`'s vault: a temporary file, then rename, so a
    /// reader sees the old file or the new one. Returns the failure it logged, if any.
    @discardableResult
    func publish(uid: UInt32, _ parameters: KDFParameters) -> Failure? {
        let path = directory + "/" + PublishedKDFParameters.fileName(uid: uid)
        let temporary = path + ".tmp"
        let bytes = PublishedKDFParameters(
            publisherPID: publisherPID, publisherStartTime: publisherStartTime, uid: uid,
            parameters: KeyDerivationParameters(
                opsLimit: parameters.opsLimit, memoryLimit: UInt64(parameters.memoryLimit), salt: parameters.salt)
        ).encoded()
        do throws(Failure) {
            try prepareDirectory()
            do throws(SystemError) {
                try FileSystem.removeIfPresent(temporary)
                let fd = try FileSystem.open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
                defer { close(fd) }
                try FileSystem.replaceContent(fd, with: bytes)
                try FileSystem.rename(temporary, path)
                return nil
            } catch { throw .system(error) }
        } catch {
            Log.warning("uid \(uid): cannot publish the KDF parameters for pam_arca: \(error)")
            try? FileSystem.removeIfPresent(temporary)
            try? FileSystem.removeIfPresent(path)
            return error
        }
    }

    /// Creates the directory (0700) or checks the one there: a directory of arcad's own uid
    /// that nobody else may read or write. One of arcad's own that others could read but not
    /// write (0755: an administrator's mkdir) is tightened to 0700: nobody else could have
    /// put anything in it. Any other (another owner, writable by others, a symlink) is refused.
    private func prepareDirectory() throws(Failure) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw .system(SystemError(call: "mkdir \(directory)", errno: Errno.current))
        }
        let found: FileDescriptor.Status?
        do { found = try FileSystem.status(path: directory) } catch { throw .system(error) }
        guard let status = found, status.isDirectory, !status.isSymbolicLink, status.owner == geteuid(),
            status.permissions & 0o022 == 0
        else { throw .refusedDirectory(directory) }
        if status.permissions & 0o077 != 0 {
            guard chmod(directory, 0o700) == 0 else {
                throw .system(SystemError(call: "chmod \(directory)", errno: Errno.current))
            }
            Log.notice("\(directory) was readable by others: made 0700")
        }
    }
}

extension Daemon {
    /// Publishes the parameters `vault` has now as those of `uid`'s vault (nothing without
    /// a publication: the in-process tests, unless they ask for one).
    func publishParameters(uid: UInt32, of vault: Vault) {
        publication?.publish(uid: uid, vault.kdfParameters)
    }
}
