import ArcaCrypto

#if canImport(Glibc)
import Glibc
#endif

/// arcad's state directory: `users/<uid>.db` vaults, `system.db`, `host.key`.
/// Directories are 0700 and files 0600, owned by root.
enum StateDirectory {
    static func prepare(_ path: String) throws(HandlerError) {
        for directory in [path, "\(path)/users"] {
            if mkdir(directory, 0o700) != 0 && errno != EEXIST {
                throw HandlerError(.notAvailable, "cannot create \(directory): \(String(cString: strerror(errno)))")
            }
            // An existing directory is tightened too: vault names are uids.
            chmod(directory, 0o700)
        }
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// The host secret, created (32 random bytes, 0600) on first start. It keys the
    /// ThisDeviceOnly classes, so a copied vault cannot open them elsewhere.
    static func hostSecret(in directory: String) throws(HandlerError) -> SecretBytes {
        let path = "\(directory)/host.key"
        let length = 32
        var fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 && errno == ENOENT {
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw HandlerError(.notAvailable, "cannot create \(path)") }
            defer { close(fd) }
            do {
                let secret = try SecretBytes.random(count: length)
                let written = secret.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                guard written == length, fsync(fd) == 0 else {
                    unlink(path)
                    throw HandlerError(.notAvailable, "cannot write \(path)")
                }
                return secret
            } catch let error as HandlerError {
                throw error
            } catch {
                unlink(path)
                throw HandlerError(.notAvailable, "out of locked memory")
            }
        }
        guard fd >= 0 else { throw HandlerError(.notAvailable, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        do {
            return try SecretBytes(count: length) { buffer in
                let n = read(fd, buffer.baseAddress, length)
                guard n == length else { throw HandlerError(.decode, "\(path) is damaged (expected \(length) bytes)") }
            }
        } catch let error as HandlerError {
            throw error
        } catch {
            throw HandlerError(.notAvailable, "out of locked memory")
        }
    }
}
