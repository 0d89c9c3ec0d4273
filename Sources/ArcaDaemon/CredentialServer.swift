import ArcaCrypto
import ArcaProtocol
import ArcaSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's `LoadCredential=ID:/run/arca/credentials.sock` (ARCHITECTURE §8).
///
/// systemd (PID 1, uid 0) connects from the abstract address
/// `\0<random>/unit/<unit>/<id>` and reads the credential until EOF. arcad
/// accepts only peer uid 0, so that the unit and id in the address are systemd's
/// word and not a forgery by any local user (binding an abstract address needs
/// no privilege); it writes the secret of the system item granted to that unit
/// under that id, and closes. Anything else is closed at once, without a byte,
/// and logged.
public final class CredentialServer: Sendable {
    private let listener: Int32
    private let daemon: Daemon

    /// Listens at `config.credentialsSocket` (mode 0666: the peer check decides,
    /// and refusals are logged), creating its directory (0755) if needed.
    public init(config: DaemonConfig, daemon: Daemon) throws {
        self.daemon = daemon
        try Server.makeDirectory(parentOf: config.credentialsSocket)
        listener = try SocketSystem.listen(path: config.credentialsSocket, mode: 0o666)
        Log.info("serving systemd credentials on \(config.credentialsSocket)")
    }

    /// Serves connections one at a time on a thread of its own. Each is short (one
    /// write of at most 1 MiB under a send timeout), so a queue is not needed.
    public func start() {
        do {
            try Threads.detach { [self] in
                while true {
                    guard let client = try? SocketSystem.accept(listener, nonBlocking: false) else {
                        usleep(100_000)
                        continue
                    }
                    serve(client)
                    close(client)
                }
            }
        } catch {
            Log.error("cannot start the credentials thread: \(error)")
        }
    }

    private func serve(_ fd: Int32) {
        let peer: PeerCredentials
        do {
            peer = try SocketSystem.peerCredentials(fd)
            try SocketSystem.setTimeouts(fd, milliseconds: 2_000)
        } catch {
            Log.warning("credentials: connection refused: \(error)")
            return
        }
        guard peer.isRoot else {
            Log.warning("credentials: refused pid \(peer.pid) uid \(peer.uid): only systemd (uid 0) may ask")
            return
        }
        guard let (unit, id) = Self.unitAndID(peerOf: fd) else {
            Log.warning("credentials: refused pid \(peer.pid): the peer address is not systemd's \\0…/unit/UNIT/ID")
            return
        }
        guard let secret = daemon.credential(unit: unit, id: id) else {
            Log.warning("credentials: nothing granted to unit \(unit) under id \(id)")
            return
        }
        do {
            try secret.withUnsafeBytes { try SocketSystem.writeAll(fd, $0) }
            Log.info("credentials: served \(id) to unit \(unit)")
        } catch {
            Log.warning("credentials: writing \(id) to unit \(unit) failed: \(error)")
        }
    }

    /// `(unit, id)` from the peer's abstract address `\0<random>/unit/<unit>/<id>`.
    static func unitAndID(peerOf fd: Int32) -> (String, String)? {
        guard let bytes = try? UnixSocket.peerAddress(FileDescriptor(rawValue: fd)) else { return nil }
        return unitAndID(address: bytes)
    }

    /// Parses the bytes of a `sun_path`: an abstract name (leading NUL), then
    /// `<random>/unit/<unit>/<id>` with no further slash and no NUL.
    static func unitAndID(address bytes: [UInt8]) -> (String, String)? {
        guard bytes.first == 0, !bytes.dropFirst().contains(0),
            let text = String(validating: bytes.dropFirst(), as: UTF8.self)
        else { return nil }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, !parts[0].isEmpty, parts[1] == "unit", !parts[2].isEmpty, !parts[3].isEmpty else {
            return nil
        }
        return (String(parts[2]), String(parts[3]))
    }
}
