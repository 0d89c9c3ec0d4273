import ArcaSystem
import Glibc
import Testing

@Suite("UnixSocket: listen, connect, accept4, peer credentials")
struct UnixSocketTests {
    private func temporarySocketPath() -> String {
        "/tmp/arca-sys-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
    }

    /// Runs `body` with a listening socket at a fresh path (mode 0600), removed afterwards.
    private func withListener(_ body: (String, FileDescriptor) throws -> Void) throws {
        let path = temporarySocketPath()
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        defer {
            listener.close()
            unlink(path)
        }
        try body(path, listener)
    }

    @Test("a connection's peer is this process, accepted close-on-exec, bytes pass both ways")
    func roundTrip() throws {
        try withListener { path, listener in
            var st = stat()
            try #require(stat(path, &st) == 0)
            #expect(st.st_mode & 0o777 == 0o600)

            let client = try UnixSocket.connect(path: path, timeoutMilliseconds: 2_000)
            defer { client.close() }
            let server = try UnixSocket.accept(listener)
            defer { server.close() }
            #expect(fcntl(server.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)

            let peer = try UnixSocket.peer(server)
            #expect(peer == SocketPeer(pid: getpid(), uid: geteuid(), gid: getegid()))
            let groups = try UnixSocket.peerGroups(server)
            var mine = [gid_t](repeating: 0, count: Int(getgroups(0, nil)))
            _ = getgroups(Int32(mine.count), &mine)
            #expect(Set(groups) == Set(mine))

            try [UInt8]([1, 2, 3, 4]).withUnsafeBytes { try UnixSocket.sendAll(client, $0) }
            var received = [UInt8](repeating: 0, count: 4)
            #expect(try received.withUnsafeMutableBytes { try server.readExactly(into: $0) })
            #expect(received == [1, 2, 3, 4])
        }
    }

    @Test("a read past the socket timeout fails with EAGAIN, not a hang")
    func timeout() throws {
        try withListener { path, _ in
            let client = try UnixSocket.connect(path: path, timeoutMilliseconds: 50)
            defer { client.close() }
            var byte = [UInt8](repeating: 0, count: 1)
            #expect(throws: Errno.wouldBlock) { try byte.withUnsafeMutableBytes { try client.read(into: $0) } }
        }
    }

    @Test("connect to a missing path is ENOENT; an empty or over-long path is ENAMETOOLONG")
    func connectFailures() {
        #expect(throws: Errno.noSuchFileOrDirectory) { try UnixSocket.connect(path: temporarySocketPath()) }
        #expect(throws: Errno.nameTooLong) { try UnixSocket.connect(path: "/" + String(repeating: "x", count: 200)) }
        #expect(throws: Errno.nameTooLong) { try UnixSocket.connect(path: "") }
    }

    @Test("send to a closed peer is EPIPE and no SIGPIPE kills the process")
    func brokenPipe() throws {
        try withListener { path, listener in
            let client = try UnixSocket.connect(path: path)
            defer { client.close() }
            try UnixSocket.accept(listener).close()
            let bytes = [UInt8](repeating: 7, count: 1 << 16)
            #expect(throws: Errno.brokenPipe) { try bytes.withUnsafeBytes { try UnixSocket.sendAll(client, $0) } }
        }
    }
}
