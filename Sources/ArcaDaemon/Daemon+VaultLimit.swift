import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One user must not fill the disk that every vault lives on: a write to a vault
/// at or over `max_vault_bytes` (the database and its write-ahead log) fails
/// with `errSecQuotaExceeded`, and nothing is written. Deleting items is always
/// allowed, and shrinks the file as SQLite reuses its pages.
extension Daemon {
    /// The bytes the user's vault takes on disk.
    func vaultBytes(_ uid: UInt32) -> Int {
        let path = vaultPath(uid)
        return Self.fileSize(path) + Self.fileSize(path + "-wal")
    }

    /// Throws `errSecQuotaExceeded` when the user's vault is at its size limit.
    func requireVaultRoom(_ uid: UInt32) throws(HandlerError) {
        let size = vaultBytes(uid)
        guard size < config.maxVaultBytes else {
            throw HandlerError(
                .quotaExceeded,
                "the vault is full (\(size) bytes; the limit is \(config.maxVaultBytes), arca.conf max_vault_bytes); "
                    + "delete items to make room")
        }
    }

    /// The size of a file, 0 if it does not exist or cannot be read (a symlink's own size: the
    /// state directory refuses links). The corresponding C function is `lstat`.
    static func fileSize(_ path: String) -> Int {
        ((try? FileDescriptor.status(path: path)) ?? nil)?.size ?? 0
    }
}
