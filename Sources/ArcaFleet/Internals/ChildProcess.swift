import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A child process with pipes on stdin, stdout and stderr (posix_spawn), for etcdctl.
/// Arguments never carry secrets: what etcdctl writes to etcd is signed ciphertext,
/// and it goes over stdin. The environment is a fixed, minimal one. `package`: a probe
/// (Tests/ArcaFleetSpawnProbe) starts one from a process whose descriptors 0-2 are closed.
package final class ChildProcess {
    package let pid: pid_t
    private var stdoutFD: Int32
    private var stderrFD: Int32
    private var buffered: [UInt8] = []
    private var errorText: [UInt8] = []
    private var reaped: Int32?

    /// One pipe, both ends close-on-exec; as `FileDescriptor.pipe`.
    package typealias Pipe = (read: FileDescriptor, write: FileDescriptor)

    /// Starts `path` with `arguments`, writes `input` to its stdin and closes it. When a pipe
    /// or the spawn fails, every descriptor made so far is closed: the agent runs for months
    /// and starts a child per etcd call, so a leak per failure would end in EMFILE.
    /// `makingPipe` makes each of the three pipes (a probe places their ends on 0-2).
    package init(
        path: String, arguments: [String], input: [UInt8],
        makingPipe: () throws(Errno) -> Pipe = { () throws(Errno) in try FileDescriptor.pipe() }
    ) throws(FleetError) {
        // Close-on-exec from the start (pipe2): our ends must not leak into other children
        // (each agent runs a watch child at all times); dup2 onto 0-2 clears it in the child.
        let pipes: [Pipe]
        do {
            pipes = try Self.pipes(3, making: makingPipe)
        } catch {
            throw .etcd("pipe: \(String(cString: strerror(error.rawValue)))")
        }
        let ourEnds = [pipes[0].write, pipes[1].read, pipes[2].read]
        // The child's ends above 2 first: the spawn dup2s them onto 0, 1 and 2 in that order,
        // so an end sitting on 0 or 1 (a parent started with 0-2 closed, or whose other threads
        // closed and reopened descriptors) would be overwritten before it is read, and the
        // child's streams would land on the wrong pipes.
        let childEnds: [FileDescriptor]
        do {
            childEnds = try Self.aboveStandardStreams([pipes[0].read, pipes[1].write, pipes[2].write])
        } catch {
            for fd in ourEnds { fd.close() }
            throw .etcd("fcntl: \(String(cString: strerror(error.rawValue)))")
        }
        let spawned = Self.spawn(path, [path] + arguments, standardStreams: childEnds)
        for fd in childEnds { fd.close() }
        switch spawned {
        case .success(let child):
            pid = child
        case .failure(let error):
            for fd in ourEnds { fd.close() }
            throw .etcd("cannot run \(path): \(String(cString: strerror(error.rawValue)))")
        }
        stdoutFD = ourEnds[1].rawValue
        stderrFD = ourEnds[2].rawValue
        // etcdctl reads its stdin to the end before it talks to etcd; values are small
        // (a few KiB) but a full pipe must not deadlock us, so ignore SIGPIPE-style failures.
        let stdin = ourEnds[0]
        _ = input.withUnsafeBytes { raw in Result { () throws(Errno) in try stdin.writeAll(raw) } }
        stdin.close()
    }

    /// `count` pipes made by `make`, or none: when one fails, those already made are closed.
    static func pipes(_ count: Int, making make: () throws(Errno) -> Pipe) throws(Errno) -> [Pipe] {
        var made: [Pipe] = []
        do throws(Errno) {
            for _ in 0..<count { made.append(try make()) }
            return made
        } catch {
            for pipe in made {
                pipe.read.close()
                pipe.write.close()
            }
            throw error
        }
    }

    /// `ends`, each on a descriptor above 2: one on 0, 1 or 2 is moved (ArcaSystem's
    /// `duplicate`, its old number closed). When a move fails, every end is closed.
    static func aboveStandardStreams(_ ends: [FileDescriptor]) throws(Errno) -> [FileDescriptor] {
        var lifted: [FileDescriptor] = []
        for (index, fd) in ends.enumerated() {
            guard fd.rawValue <= 2 else {
                lifted.append(fd)
                continue
            }
            do {
                let high = try fd.duplicate()
                fd.close()
                lifted.append(high)
            } catch {
                for end in lifted + ends[index...] { end.close() }
                throw error
            }
        }
        return lifted
    }

    /// posix_spawn of `path` with `words` as argv, the fixed environment, and
    /// `standardStreams` dup'ed onto 0, 1 and 2. Opens no descriptor of ours.
    private static func spawn(_ path: String, _ words: [String], standardStreams: [FileDescriptor])
        -> Result<pid_t, Errno>
    {
        var actions = posix_spawn_file_actions_t()
        // These return the error number instead of setting errno.
        let initialized = posix_spawn_file_actions_init(&actions)
        guard initialized == 0 else { return .failure(Errno(rawValue: initialized)) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, fd) in standardStreams.enumerated() {
            let added = posix_spawn_file_actions_adddup2(&actions, fd.rawValue, CInt(target))
            guard added == 0 else { return .failure(Errno(rawValue: added)) }
        }
        let environment: [String] = ["PATH=/usr/bin:/bin", "ETCDCTL_API=3"]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { word in strdup(word) }
        defer { for p in argv + envp { free(p) } }
        guard !(argv + envp).contains(where: { $0 == nil }) else { return .failure(.noMemory) }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, nil, argv + [nil], envp + [nil])
        return status == 0 ? .success(child) : .failure(Errno(rawValue: status))
    }

    deinit {
        if reaped == nil {
            kill(pid, SIGKILL)
            _ = waitForExit()
        }
        if stdoutFD >= 0 { close(stdoutFD) }
        if stderrFD >= 0 { close(stderrFD) }
    }

    /// Reads stdout and stderr to the end, waits, and returns (status, stdout, stderr).
    package func finish() -> (status: Int32, output: [UInt8], error: String) {
        var lines: [UInt8] = []
        while let line = readLine(timeoutMilliseconds: -1) { lines += line + [0x0a] }
        while stderrFD >= 0 { drain(&stderrFD, into: &errorText) }
        let output = lines
        buffered = []
        return (waitForExit(), output, String(decoding: errorText, as: UTF8.self))
    }

    /// The next line of stdout (without the newline); nil at the end of the output; an
    /// empty array when the timeout passed first (etcdctl never prints empty lines).
    func readLine(timeoutMilliseconds: Int32) -> [UInt8]? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0a) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return line
            }
            if stdoutFD < 0 {
                if buffered.isEmpty { return nil }
                defer { buffered = [] }
                return buffered
            }
            var fds = [pollfd(fd: stdoutFD, events: Int16(POLLIN), revents: 0)]
            if stderrFD >= 0 { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
            let count = nfds_t(fds.count)
            guard case .success(let ready) = valueOrErrno({ poll(&fds, count, timeoutMilliseconds) }) else {
                return nil
            }
            if ready == 0 { return [] }
            if fds.count > 1, fds[1].revents != 0 { drain(&stderrFD, into: &errorText) }
            if fds[0].revents != 0 { drain(&stdoutFD, into: &buffered) }
        }
    }

    /// What the child wrote on stderr so far.
    var errorOutput: String { String(decoding: errorText, as: UTF8.self) }

    private func drain(_ fd: inout Int32, into buffer: inout [UInt8]) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let descriptor = FileDescriptor(rawValue: fd)
        let read = chunk.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try descriptor.read(into: raw) } }
        if case .success(let n) = read, n > 0 {
            buffer += chunk[..<n]
            return
        }
        if case .failure(.wouldBlock) = read { return }
        close(fd)
        fd = -1
    }

    /// Stops the child (SIGTERM) and reaps it.
    func terminate() {
        if reaped == nil { kill(pid, SIGTERM) }
        _ = waitForExit()
    }

    @discardableResult
    func waitForExit() -> Int32 {
        if let reaped { return reaped }
        var status: Int32 = 0
        _ = valueOrErrno { waitpid(pid, &status, 0) }
        // WIFEXITED / WEXITSTATUS by hand: the macros are not imported.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        reaped = code
        return code
    }
}
