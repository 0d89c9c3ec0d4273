import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A child process with pipes on stdin, stdout and stderr (posix_spawn), for etcdctl.
/// Arguments never carry secrets: what etcdctl writes to etcd is signed ciphertext,
/// and it goes over stdin. The environment is a fixed, minimal one.
final class ChildProcess {
    let pid: pid_t
    private var stdoutFD: Int32
    private var stderrFD: Int32
    private var buffered: [UInt8] = []
    private var errorText: [UInt8] = []
    private var reaped: Int32?

    /// Starts `path` with `arguments`, writes `input` to its stdin and closes it.
    init(path: String, arguments: [String], input: [UInt8]) throws(FleetError) {
        // Close-on-exec from the start (pipe2): our ends must not leak into other children
        // (each agent runs a watch child at all times); dup2 onto 0-2 clears it in the child.
        let inPipe: [Int32]
        let outPipe: [Int32]
        let errPipe: [Int32]
        do {
            let (inRead, inWrite) = try FileDescriptor.pipe()
            inPipe = [inRead.rawValue, inWrite.rawValue]
            let (outRead, outWrite) = try FileDescriptor.pipe()
            outPipe = [outRead.rawValue, outWrite.rawValue]
            let (errRead, errWrite) = try FileDescriptor.pipe()
            errPipe = [errRead.rawValue, errWrite.rawValue]
        } catch {
            throw .etcd("pipe: \(String(cString: strerror(error.rawValue)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let words: [String] = [path] + arguments
        let environment: [String] = ["PATH=/usr/bin:/bin", "ETCDCTL_API=3"]
        let argv: [UnsafeMutablePointer<CChar>?] = words.map { word in strdup(word) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { word in strdup(word) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, path, &actions, nil, argv, envp)
        close(inPipe[0])
        close(outPipe[1])
        close(errPipe[1])
        guard status == 0 else {
            close(inPipe[1])
            close(outPipe[0])
            close(errPipe[0])
            throw .etcd("cannot run \(path): \(String(cString: strerror(status)))")
        }
        pid = child
        stdoutFD = outPipe[0]
        stderrFD = errPipe[0]
        // etcdctl reads its stdin to the end before it talks to etcd; values are small
        // (a few KiB) but a full pipe must not deadlock us, so ignore SIGPIPE-style failures.
        let stdin = FileDescriptor(rawValue: inPipe[1])
        _ = input.withUnsafeBytes { raw in Result { () throws(Errno) in try stdin.writeAll(raw) } }
        stdin.close()
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
    func finish() -> (status: Int32, output: [UInt8], error: String) {
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
