import ArcaSystem
import Foundation
import Glibc
import Testing

/// Signals the test's handler caught (written from the handler only).
nonisolated(unsafe) private var interruptions = 0

/// connect(2) interrupted by a real signal: a handler installed without SA_RESTART, sent with
/// pthread_kill to the thread while /proc shows it blocked in connect on a listener whose
/// backlog is full. After EINTR the socket must be waited for (poll, SO_ERROR), not
/// connected again while that connect is under way: Linux answers a second TCP connect with
/// EALREADY once its wait runs out. (Linux drops an interrupted Unix connect: that one is made again.)
@Suite(
    "connect interrupted by a signal: waited for (poll, SO_ERROR), no second connect while the first is under way",
    .serialized)
struct ConnectInterruptTests {
    /// The system call numbers /proc/<tid>/syscall shows.
    #if arch(x86_64)
        static let connectCall = 42
        static let pollCalls: Set<Int> = [7, 271]  // poll, ppoll
    #elseif arch(arm64)
        static let connectCall = 203
        static let pollCalls: Set<Int> = [73]  // ppoll
    #endif

    /// A connect running on its own thread.
    final class Attempt: @unchecked Sendable {
        // Every field is read and written under `condition`.
        private let condition = NSCondition()
        private var task: String?
        private var thread: pthread_t?
        private var outcome: Result<FileDescriptor, Errno>?

        init(_ connect: @escaping @Sendable () throws(Errno) -> FileDescriptor) {
            Thread { [self] in
                // Foundation's threads start with most signals blocked (SigBlk): take SIGURG.
                var signals = sigset_t()
                sigemptyset(&signals)
                sigaddset(&signals, SIGURG)
                pthread_sigmask(SIG_UNBLOCK, &signals, nil)
                let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                condition.lock()
                task = "/proc/" + link
                thread = pthread_self()
                condition.broadcast()
                condition.unlock()
                let result = Result { () throws(Errno) in try connect() }
                condition.lock()
                outcome = result
                condition.broadcast()
                condition.unlock()
            }.start()
        }

        /// The thread's current system call number; nil while it runs or after it ended.
        var systemCall: Int? {
            condition.lock()
            while task == nil { condition.wait() }
            let path = (task ?? "") + "/syscall"
            condition.unlock()
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            return text.split(separator: " ").first.flatMap { Int($0) }
        }

        /// Sends SIGURG to the thread.
        func interrupt() {
            condition.lock()
            defer { condition.unlock() }
            if let thread { pthread_kill(thread, SIGURG) }
        }

        var finished: Bool {
            condition.lock()
            defer { condition.unlock() }
            return outcome != nil
        }

        /// The connect's outcome, waiting up to 20 s.
        func result() -> Result<FileDescriptor, Errno>? {
            condition.lock()
            defer { condition.unlock() }
            let limit = Date(timeIntervalSinceNow: 20)
            while outcome == nil, condition.wait(until: limit) {}
            return outcome
        }
    }

    /// Polls `condition` every millisecond for up to 10 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        for _ in 0..<10_000 {
            if condition() { return true }
            usleep(1000)
        }
        return false
    }

    /// Runs `body` with a SIGURG handler installed without SA_RESTART; restores the old one.
    static func withInterruptingHandler(_ body: () throws -> Void) rethrows {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions &+= 1 }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        #expect(sigaction(SIGURG, &action, &previous) == 0)
        defer { sigaction(SIGURG, &previous, nil) }
        try body()
    }

    /// Starts `connect` on its own thread, waits until it blocks in connect(2) and sends it the
    /// signal; returns once the handler ran (so that connect call has returned EINTR).
    private static func interruptedConnect(_ connect: @escaping @Sendable () throws(Errno) -> FileDescriptor)
        -> Attempt
    {
        let attempt = Attempt(connect)
        let before = interruptions
        #expect(eventually { attempt.systemCall == connectCall }, "the thread never blocked in connect")
        attempt.interrupt()
        #expect(eventually { interruptions > before }, "the handler never ran")
        return attempt
    }

    /// Whether the attempt's thread goes on to wait in poll (before it ends).
    private static func polls(_ attempt: Attempt) -> Bool {
        var polled = false
        _ = eventually {
            polled = attempt.systemCall.map(pollCalls.contains) ?? false
            return polled || attempt.finished
        }
        return polled
    }

    /// Makes room on `listener` (accepts one queued connection) and expects `attempt` to
    /// connect: a byte it sends arrives on exactly one of the connections accepted (all that
    /// were waiting). Returns how many were accepted.
    private static func expectConnectsOnceRoom(_ attempt: Attempt, _ listener: FileDescriptor) throws -> Int {
        var accepted = [try UnixSocket.accept(listener)]
        defer { accepted.forEach { $0.close() } }
        let fd = try #require(try attempt.result()).get()
        defer { fd.close() }
        try [UInt8]([42]).withUnsafeBytes { try UnixSocket.sendAll(fd, $0) }
        while try listener.poll(for: Int16(POLLIN), milliseconds: 200) {
            accepted.append(try UnixSocket.accept(listener))
        }
        let readable = try accepted.filter { try $0.poll(for: Int16(POLLIN), milliseconds: 200) }
        #expect(readable.count == 1, "exactly one accepted connection is the interrupted one")
        return accepted.count
    }

    /// Connects with `connect` until one times out: the listener's backlog is full then.
    private static func fillBacklog(_ connect: () throws(Errno) -> FileDescriptor) -> [FileDescriptor] {
        var queued: [FileDescriptor] = []
        for _ in 0..<16 {
            switch Result(catching: { () throws(Errno) in try connect() }) {
            case .success(let fd): queued.append(fd)
            // EINPROGRESS: what Linux gives a blocking TCP connect past its timeout (before the fix).
            case .failure(.wouldBlock), .failure(.inProgress): return queued
            case .failure(let error): Issue.record("filling the backlog: \(error)")
            }
        }
        Issue.record("the backlog never filled")
        return queued
    }

    /// A TCP listener on 127.0.0.1 whose accept queue is full: its port, and the connections
    /// queued on it (the SYN of the next connect is dropped, so that connect blocks).
    private static func fullTCPListener() throws -> (listener: FileDescriptor, port: UInt16, queued: [FileDescriptor]) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        if !bound { close(fd) }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let queued = fillBacklog { () throws(Errno) in try LoopbackSocket.connect(port: port, timeoutMilliseconds: 200)
        }
        return (FileDescriptor(rawValue: fd), port, queued)
    }

    /// A Unix listener (backlog 0) whose queue is full, at a fresh path.
    struct FullUnixListener {
        let path: String
        let listener: FileDescriptor
        let queued: [FileDescriptor]

        /// Closes the connections and the listener, and removes the socket file.
        func close() {
            (queued + [listener]).forEach { $0.close() }
            unlink(path)
        }
    }

    static func fullUnixListener() throws -> FullUnixListener {
        let path = "/tmp/arca-sys-eintr-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = try UnixSocket.listen(path: path, mode: 0o600, backlog: 0)
        let queued = fillBacklog { () throws(Errno) in try UnixSocket.connect(path: path, timeoutMilliseconds: 100) }
        return FullUnixListener(path: path, listener: listener, queued: queued)
    }

    /// ``interruptedConnect(_:)`` of a loopback connect to `port`.
    private static func interruptedConnect(port: UInt16, timeoutMilliseconds: Int) -> Attempt {
        interruptedConnect { () throws(Errno) in
            try LoopbackSocket.connect(port: port, timeoutMilliseconds: timeoutMilliseconds)
        }
    }

    @Test("not interrupted: a connect past its timeout fails with wouldBlock, TCP (Linux: EINPROGRESS) as Unix")
    func timeoutIsWouldBlock() throws {
        let (listener, port, queued) = try Self.fullTCPListener()
        defer { (queued + [listener]).forEach { $0.close() } }
        #expect(throws: Errno.wouldBlock) { try LoopbackSocket.connect(port: port, timeoutMilliseconds: 100) }
        let unix = try Self.fullUnixListener()
        defer { unix.close() }
        #expect(throws: Errno.wouldBlock) { try UnixSocket.connect(path: unix.path, timeoutMilliseconds: 100) }
    }

    @Test("TCP, with a timeout: the interrupted connect is waited for and times out as wouldBlock (not EALREADY)")
    func tcpTimesOut() throws {
        let (listener, port, queued) = try Self.fullTCPListener()
        defer { (queued + [listener]).forEach { $0.close() } }
        try Self.withInterruptingHandler {
            let attempt = Self.interruptedConnect(port: port, timeoutMilliseconds: 1_500)
            #expect(Self.polls(attempt), "after EINTR the thread must poll, not connect again")
            let result = try #require(attempt.result())
            if case .success(let fd) = result { fd.close() }
            #expect(throws: Errno.wouldBlock) { try result.get() }
        }
    }

    @Test("TCP: the interrupted connect completes once the listener makes room (SO_ERROR 0, connected)")
    func tcpCompletes() throws {
        let (listener, port, queued) = try Self.fullTCPListener()
        defer { (queued + [listener]).forEach { $0.close() } }
        try Self.withInterruptingHandler {
            let attempt = Self.interruptedConnect(port: port, timeoutMilliseconds: 10_000)
            #expect(Self.polls(attempt))
            // Room in the accept queue: the next SYN the client resends (after ~1 s) gets in.
            _ = try Self.expectConnectsOnceRoom(attempt, listener)
        }
    }

    @Test("TCP: the interrupted connect's refusal comes from SO_ERROR as ECONNREFUSED")
    func tcpRefusedAfterInterrupt() throws {
        let (listener, port, queued) = try Self.fullTCPListener()
        var listening = true
        defer {
            queued.forEach { $0.close() }
            if listening { listener.close() }
        }
        try Self.withInterruptingHandler {
            let attempt = Self.interruptedConnect(port: port, timeoutMilliseconds: 10_000)
            #expect(Self.polls(attempt))
            // Nothing listens any more: the SYN the client resends gets a reset.
            listener.close()
            listening = false
            let result = try #require(attempt.result())
            if case .success(let fd) = result { fd.close() }
            #expect(throws: Errno.connectionRefused) { try result.get() }
        }
    }

    @Test("Unix: Linux drops an interrupted connect; it is made again and completes once there is room")
    func unixCompletes() throws {
        let unix = try Self.fullUnixListener()
        defer { unix.close() }
        try Self.withInterruptingHandler {
            let attempt = Self.interruptedConnect { () throws(Errno) in try UnixSocket.connect(path: unix.path) }
            // That connect returned EINTR; the thread is blocked again in a new one, as the
            // kernel dropped the first.
            #expect(Self.eventually { attempt.systemCall == Self.connectCall })
            let accepted = try Self.expectConnectsOnceRoom(attempt, unix.listener)
            #expect(accepted == unix.queued.count + 1)
        }
    }

    /// The socket's SO_SNDTIMEO in milliseconds.
    private static func sendTimeout(_ fd: FileDescriptor) throws -> Int {
        var tv = timeval()
        var size = socklen_t(MemoryLayout<timeval>.size)
        try #require(getsockopt(fd.rawValue, SOL_SOCKET, SO_SNDTIMEO, &tv, &size) == 0)
        return tv.tv_sec > Int.max / 1000 - 1 ? Int.max : tv.tv_sec * 1000 + tv.tv_usec / 1000
    }

    /// An interrupted Unix connect with `timeoutMilliseconds` that completes once there is room.
    private static func unixInterruptedThenRoom(timeoutMilliseconds: Int) throws -> Int {
        let unix = try Self.fullUnixListener()
        defer { unix.close() }
        var timeout = -1
        try Self.withInterruptingHandler {
            let attempt = Self.interruptedConnect { () throws(Errno) in
                try UnixSocket.connect(path: unix.path, timeoutMilliseconds: timeoutMilliseconds)
            }
            #expect(Self.eventually { attempt.systemCall == Self.connectCall })
            usleep(100_000)
            var accepted = [try UnixSocket.accept(unix.listener)]
            defer { accepted.forEach { $0.close() } }
            let fd = try #require(try attempt.result()).get()
            defer { fd.close() }
            timeout = try Self.sendTimeout(fd)
            while try unix.listener.poll(for: Int16(POLLIN), milliseconds: 200) {
                accepted.append(try UnixSocket.accept(unix.listener))
            }
        }
        return timeout
    }

    @Test("Unix, with a timeout: the connect made again waits for the time left; SO_SNDTIMEO is then full again")
    func unixSendTimeoutRestored() throws {
        #expect(try Self.unixInterruptedThenRoom(timeoutMilliseconds: 10_000) == 10_000)
    }

    @Test("timeout 0 means none (as SO_SNDTIMEO 0 to the kernel), also after a signal; Int.max does not trap")
    func edgeTimeouts() throws {
        #expect(try Self.unixInterruptedThenRoom(timeoutMilliseconds: 0) == 0)
        let huge = try Self.unixInterruptedThenRoom(timeoutMilliseconds: Int.max)
        #expect(huge > 1_000_000_000, "Int.max is the kernel's longest timeout, not a short one: \(huge)")
        let listener = try UnixSocket.listen(path: "/tmp/arca-sys-edge-\(getpid()).sock", mode: 0o600)
        defer {
            listener.close()
            unlink("/tmp/arca-sys-edge-\(getpid()).sock")
        }
        let fd = try UnixSocket.connect(path: "/tmp/arca-sys-edge-\(getpid()).sock", timeoutMilliseconds: Int.max)
        fd.close()
        #expect(throws: Errno.invalidArgument) { try UnixSocket.setTimeouts(listener, milliseconds: -1) }
    }
}
