import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The socket front of arcad: modes, bounds, timeouts.
@Suite("arcad connections (root)", .serialized)
struct ArcadConnectionTests {
    @Test("the socket is 0666 in a 0755 directory that arcad creates")
    func socketModes() throws {
        let arcad = try RunningArcad(socketSubdirectory: "run-arca")
        defer { arcad.stop() }
        let socketMode = try FileManager.default.attributesOfItem(atPath: arcad.socket)[.posixPermissions] as? Int
        let directory = (arcad.socket as NSString).deletingLastPathComponent
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(socketMode == 0o666)
        #expect(directoryMode == 0o755)
        let state = try FileManager.default.attributesOfItem(atPath: arcad.directory + "/state")[.posixPermissions] as? Int
        let hostKey = try FileManager.default.attributesOfItem(atPath: arcad.directory + "/state/host.key")
        #expect(state == 0o700)
        #expect(hostKey[.posixPermissions] as? Int == 0o600)
        #expect(hostKey[.size] as? Int == 32)
    }

    @Test("one user may hold max_connections_per_uid connections; more are closed")
    func perUIDBound() throws {
        try withThrowawayUsers(1, prefix: "arcac") { users in
            let arcad = try RunningArcad(config: "max_connections_per_uid = 8\n")
            defer { arcad.stop() }
            #expect(try users[0].probe(arcad.socket, "hold", "8") == "ok answered=8 of 8")
            #expect(try users[0].probe(arcad.socket, "hold", "12") == "ok answered=8 of 12")
            // Root (the login stack) is not held to the per-user bound.
            let roots = try (0..<12).map { _ in try ArcadClient(path: arcad.socket, timeoutMilliseconds: 2000) }
            for client in roots { #expect(try client.send(.status(uid: nil)) == emptyRootStatus) }
        }
    }

    @Test("a stuck client blocks nobody, and is dropped after client_timeout_ms")
    func stuckClient() throws {
        let arcad = try RunningArcad(config: "client_timeout_ms = 400\n")
        defer { arcad.stop() }
        // Half a frame: a header announcing a 100-byte body that never comes.
        var header = Frame.magic + [0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 100]
        let stuck = try RawConnection(arcad.socket)
        stuck.write(header)
        let start = Date()
        #expect(try arcad.send(.status(uid: nil)) == emptyRootStatus)
        #expect(Date().timeIntervalSince(start) < 0.3)
        // arcad closes the stuck connection once the timeout passes.
        #expect(stuck.readUntilClosed(seconds: 3) == true)
        header.removeAll()
    }
}

/// What root's status is on a fresh arcad.
let emptyRootStatus = Reply.status(VaultStatus(
    uid: 0, hasVault: false, unlocked: [], sessionCount: 0, passwordOutOfSync: false, itemsNotInKernel: 0,
    hasRecoveryKey: false))

/// A raw client socket for misbehaving on purpose.
final class RawConnection {
    let fd: Int32

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let p = Array(path.utf8)
            raw.copyBytes(from: p)
            raw[p.count] = 0
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { throw TestSupportError("connect failed") }
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// True when the peer closes within `seconds`.
    func readUntilClosed(seconds: Int) -> Bool {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}
