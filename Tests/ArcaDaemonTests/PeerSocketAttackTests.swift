import ArcaProtocol
import ArcaSystem
import Foundation
import Testing

@testable import ArcaDaemon

/// A session binds to the process that connected, named by the kernel (`SO_PEERPIDFD`),
/// not by a pid read later: here arcad accepts only after the opener has exited and its
/// pid has been given to another process, as when arcad is slow to accept.
@Suite("in-process arcad: a session opener's pid reused before the accept (root)", .serialized)
struct PeerSocketAttackTests {
    /// A process that connects to `path` and exits at once; returns its pid once reaped.
    func connectAndExit(_ path: String) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import socket,sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])", path]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        return p.processIdentifier
    }

    /// A process (`sleep 30`) started with pid `pid` (clone3 with set_tid, root only).
    func impostor(pid: Int32) throws -> Int32 {
        let script = """
            import ctypes, os, sys
            libc = ctypes.CDLL(None, use_errno=True)
            tid = (ctypes.c_int * 1)(int(sys.argv[1]))
            args = (ctypes.c_uint64 * 10)(0, 0, 0, 0, 17, 0, 0, 0, ctypes.addressof(tid), 1)
            r = libc.syscall(435, ctypes.byref(args), ctypes.c_size_t(80))
            if r == 0:
                # The test reads stdout to its end: no copy of the pipe may stay open in sleep.
                os.dup2(os.open("/dev/null", os.O_WRONLY), 1)
                os.closerange(3, 65536)
                os.execv("/bin/sleep", ["sleep", "30"])
            print(r if r > 0 else -ctypes.get_errno(), flush=True)
            """
        let p = Process()
        let out = Pipe()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, String(pid)]
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    func open(_ t: TestDaemon, uid: UInt32, token: UInt8, peer: PeerCredentials) -> Reply {
        var request = Request.openSession(SessionOpening(uid: uid, token: [token], service: "login"))
        return t.daemon.handle(&request, from: peer)
    }

    func sessionCount(_ t: TestDaemon, _ uid: UInt32) -> UInt32? {
        guard case .status(let s) = t.send(.status(uid: uid), as: 0) else { return nil }
        return s.sessionCount
    }

    @Test("attack: the opener exits and its pid is reused before the accept; the session still ends")
    func pidReusedBeforeAccept() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let uid: UInt32 = 60_061
        #expect(t.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("peer-\(UUID()).sock").path
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        defer {
            listener.close()
            unlink(path)
        }
        let opener = try connectAndExit(path)
        let reused = try impostor(pid: opener)
        try #require(reused == opener, "could not start a process with pid \(opener): \(reused)")
        defer { kill(reused, SIGKILL) }
        let connection = try UnixSocket.accept(listener, nonBlocking: true)
        defer { connection.close() }
        let kernel = try UnixSocket.peer(connection)
        #expect(kernel.pid == opener)
        // Whether this kernel has SO_PEERPIDFD (Linux 6.5); any other failure fails the test.
        let hasPeerPidfd: Bool
        switch Result(catching: { () throws(Errno) in try UnixSocket.peerProcess(connection) }) {
        case .success(let pidfd):
            pidfd.close()
            hasPeerPidfd = true
        case .failure(.noProtocolOption): hasPeerPidfd = false
        case .failure(let error): throw error
        }
        // Asking the socket records the kernel's answer process-wide: put it back afterwards.
        let support = PeerSocket.pidfdSupport.load(ordering: .relaxed)
        defer { PeerSocket.pidfdSupport.store(support, ordering: .relaxed) }

        // The old binding, a start time read at accept, names the impostor: its session stays.
        let startTime = ProcessHandle.startTime(of: kernel.pid)
        let byStartTime = PeerCredentials(pid: kernel.pid, uid: 0, gid: 0, startTime: startTime)
        #expect(open(t, uid: uid, token: 1, peer: byStartTime) == .ok)
        // What the server passes now: the connection, asked for the peer's pidfd (and, on a
        // kernel without SO_PEERPIDFD, the start time it read at accept).
        var bySocket = PeerCredentials(
            pid: kernel.pid, uid: kernel.uid, gid: kernel.gid, startTime: hasPeerPidfd ? nil : startTime)
        bySocket.socket = PeerSocket(fd: connection.rawValue)
        defer { bySocket.socket?.end() }
        #expect(open(t, uid: uid, token: 2, peer: bySocket) == .ok)
        #expect(sessionCount(t, uid) == 2)
        t.daemon.reapSessions()
        if hasPeerPidfd {
            // Only the session bound through the socket ended; the start-time one was fooled.
            #expect(sessionCount(t, uid) == 1)
            #expect(t.send(.closeSession(uid: uid, token: [2]), as: 0) == .ok)
            #expect(sessionCount(t, uid) == 1)
        } else {
            // The documented fallback: both are bound by the start time, and both are fooled.
            print("PeerSocketAttackTests: this kernel has no SO_PEERPIDFD (Linux < 6.5); the attack wins here")
            #expect(sessionCount(t, uid) == 2)
            #expect(t.send(.closeSession(uid: uid, token: [2]), as: 0) == .ok)
            #expect(sessionCount(t, uid) == 1)
        }
        #expect(t.send(.closeSession(uid: uid, token: [1]), as: 0) == .ok)
        #expect(sessionCount(t, uid) == 0)
    }

    @Test("a socket that gives no pidfd (not ENOPROTOOPT) and no start time read at accept: no bare-pid binding")
    func noPidfdNoStartTime() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let uid: UInt32 = 60_063
        #expect(t.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        let ends = try FileDescriptor.socketPairForTests()
        defer {
            ends.0.close()
            ends.1.close()
        }
        // A live pid (this process) with no start time: trusting it, the session would last
        // as long as whatever process holds the pid. An ended socket fails with EBADF.
        var peer = PeerCredentials(pid: getpid(), uid: 0, gid: 0)
        peer.socket = PeerSocket(fd: ends.0.rawValue)
        peer.socket?.end()
        var failure: Errno?
        if case .failure(let error) = peer.socket?.process() { failure = error }
        #expect(failure == .badFileDescriptor)
        #expect(open(t, uid: uid, token: 1, peer: peer) == .ok)
        #expect(sessionCount(t, uid) == 1)
        t.daemon.reapSessions()
        #expect(sessionCount(t, uid) == 0)
    }

    @Test("attack: a non-root peer on a socket may not open or close a session, nor read its groups after it ends")
    func nonRootPeer() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let uid: UInt32 = 60_062
        #expect(t.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        let ends = try FileDescriptor.socketPairForTests()
        defer {
            ends.0.close()
            ends.1.close()
        }
        var peer = PeerCredentials(pid: getpid(), uid: uid, gid: uid)
        peer.socket = PeerSocket(fd: ends.0.rawValue)
        let notAllowed = Reply.error(status: .missingEntitlement, message: "not allowed for this caller")
        #expect(open(t, uid: uid, token: 1, peer: peer) == notAllowed)
        var close = Request.closeSession(uid: uid, token: [1])
        #expect(t.daemon.handle(&close, from: peer) == notAllowed)
        #expect(sessionCount(t, uid) == 0)
        // Groups are the kernel's record for the connection; once it ends, none (no grant).
        let groups = peer.groups
        #expect(groups == getgroupsOfThisProcess())
        let late = PeerSocket(fd: ends.0.rawValue)
        late.end()
        #expect(late.groups == [])
    }

    func getgroupsOfThisProcess() -> [UInt32] {
        var groups = [gid_t](repeating: 0, count: 256)
        let n = getgroups(Int32(groups.count), &groups)
        return Array(groups.prefix(Int(max(n, 0))))
    }
}

extension FileDescriptor {
    /// A connected pair of Unix stream sockets (tests). The corresponding C function is `socketpair`.
    static func socketPairForTests() throws -> (FileDescriptor, FileDescriptor) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw SystemError(call: "socketpair", errno: .current)
        }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}
