import ArcaClient
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The socket front of arcad: modes, bounds, timeouts.
@Suite("arcad binary: connections (root)", .serialized)
struct ArcadConnectionTests {
    @Test("the socket is 0666 in a 0755 directory that arcad creates")
    func socketModes() throws {
        let arcad = try ArcadProcess(socketSubdirectory: "run-arca")
        defer { arcad.stop() }
        let socketMode = try FileManager.default.attributesOfItem(atPath: arcad.socket)[.posixPermissions] as? Int
        let directory = (arcad.socket as NSString).deletingLastPathComponent
        let directoryMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
        #expect(socketMode == 0o666)
        #expect(directoryMode == 0o755)
        let state =
            try FileManager.default.attributesOfItem(atPath: arcad.directory + "/state")[.posixPermissions] as? Int
        let hostKey = try FileManager.default.attributesOfItem(atPath: arcad.directory + "/state/host.key")
        #expect(state == 0o700)
        #expect(hostKey[.posixPermissions] as? Int == 0o600)
        #expect(hostKey[.size] as? Int == 32)
    }

    @Test("one user may hold max_connections_per_uid connections; more are closed")
    func perUIDBound() throws {
        try withThrowawayUsers(1, prefix: "arcac") { users in
            let arcad = try ArcadProcess(config: "max_connections_per_uid = 8\n")
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
        let arcad = try ArcadProcess(config: "client_timeout_ms = 400\n")
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

extension ArcadConnectionTests {
    /// VmRSS of `pid` in KiB, from /proc.
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// `argv` as `user`, started in the background; its stdout as a pipe.
    static func background(_ user: TestUser, _ argv: [String]) throws -> (Process, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = Array(user.command(argv).dropFirst())
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, out)
    }

    /// The first line `pipe` carries (waits for it).
    static func firstLine(_ pipe: Pipe) -> String {
        var bytes: [UInt8] = []
        while true {
            let chunk = pipe.fileHandleForReading.readData(ofLength: 1)
            guard let byte = chunk.first, byte != 10 else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("64 trickling connections from each of 4 uids: RSS grows < 20 MB and each is cut at client_timeout_ms")
    func tricklingClients() throws {
        try withThrowawayUsers(4, prefix: "servertr") { users in
            // 3 s to send a request: the tricklers' 8 s leave a wide margin on a loaded machine.
            let arcad = try ArcadProcess(config: "client_timeout_ms = 3000\n")
            defer { arcad.stop() }
            let pid = try #require(arcad.process?.processIdentifier)
            #expect(try arcad.send(.status(uid: nil)) == emptyRootStatus)
            let before = Self.residentKiB(pid)
            // Each client announces a 2 MiB body and sends one byte every 100 ms, for 8 s:
            // every read succeeds well inside the timeout, the request never completes.
            let clients = try users.map {
                try Self.background($0, [builtExecutable("arcad-probe"), arcad.socket, "trickle", "64", "8"])
            }
            for (_, out) in clients { #expect(Self.firstLine(out) == "ok connected=64") }
            var peak = before
            while clients.contains(where: { $0.0.isRunning }) {
                peak = max(peak, Self.residentKiB(pid))
                usleep(100_000)
            }
            var lines: [String] = []
            for (p, out) in clients {
                p.waitUntilExit()
                lines.append(Self.firstLine(out))
            }
            print("arcad VmRSS: \(before) KiB before, \(peak) KiB at the peak of 256 trickling connections")
            #expect(peak - before < 20 * 1024, "RSS grew by \(peak - before) KiB")
            // The deadline is per request: every trickler was cut off before its 8 s ran out.
            #expect(lines == Array(repeating: "ok closed-by-arcad=64 of 64", count: 4))
            #expect(try arcad.send(.status(uid: nil)) == emptyRootStatus)
        }
    }

    @Test("max_connections bounds every uid together")
    func globalBound() throws {
        try withThrowawayUsers(2, prefix: "serverca") { users in
            let arcad = try ArcadProcess(config: "max_connections = 10\nmax_connections_per_uid = 8\n")
            defer { arcad.stop() }
            // The first user holds 8 for 3 s; the second gets the 2 left.
            let (holder, out) = try Self.background(
                users[0], [builtExecutable("arcad-probe"), arcad.socket, "hold", "8", "3"])
            #expect(Self.firstLine(out) == "ok answered=8 of 8")
            #expect(try users[1].probe(arcad.socket, "hold", "4") == "ok answered=2 of 4")
            holder.waitUntilExit()
            #expect(try users[1].probe(arcad.socket, "hold", "4") == "ok answered=4 of 4")
        }
    }
}

/// What root's status is on a fresh arcad.
let emptyRootStatus = Reply.status(
    VaultStatus(
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
