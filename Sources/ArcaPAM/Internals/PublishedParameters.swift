import ArcaProtocol
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The KDF parameters arcad published for a user (``PublishedKDFParameters``), read by auth
/// instead of asking arcad over a connection: one connection (an accept and a worker
/// hand-off in arcad, three wake-ups) fewer per login. Believed only when all of these
/// hold, else auth asks arcad as before (a login never depends on the file):
/// - the directory next to the socket is a directory owned by root that group and others
///   cannot write, and the file, opened inside it without following a symlink, is a regular
///   file owned by root, 0600 or tighter, with one link and the exact length: whoever else
///   wrote it could make the login send a key derived with parameters of their choosing,
///   which arcad would count as a wrong guess;
/// - it decodes, and names this uid;
/// - its publisher (pid and start time) is still running: an arcad that restarted, crashed
///   or was replaced by a version that does not publish leaves a stale file behind.
enum PublishedParameters {
    /// The parameters for `uid` published by the arcad on `socketPath`, or nil.
    static func read(socketPath: String, uid: UInt32) -> KeyDerivationParameters? {
        guard let published = try? load(socketPath: socketPath, uid: uid), published.uid == uid,
            ProcessStartTime.of(pid: published.publisherPID, ignoringZombies: true) == published.publisherStartTime
        else { return nil }
        return published.parameters
    }

    /// The decoded file, after the ownership checks; nil when it is missing or refused.
    static func load(socketPath: String, uid: UInt32) throws -> PublishedKDFParameters? {
        let directory = try FileDescriptor.open(
            PublishedKDFParameters.directory(socketPath: socketPath), O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
        defer { directory.close() }
        let place = try directory.status()
        guard place.isDirectory, place.owner == 0, place.permissions & 0o022 == 0 else { return nil }
        let file = try directory.open(PublishedKDFParameters.fileName(uid: uid), O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
        defer { file.close() }
        let status = try file.status()
        guard status.isRegularFile, status.owner == 0, status.permissions & 0o077 == 0, status.linkCount == 1,
            status.size == PublishedKDFParameters.length
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: PublishedKDFParameters.length)
        guard try bytes.withUnsafeMutableBytes({ buffer throws(Errno) in try file.readExactly(into: buffer) }) else {
            return nil
        }
        return try PublishedKDFParameters(decoding: bytes)
    }
}
