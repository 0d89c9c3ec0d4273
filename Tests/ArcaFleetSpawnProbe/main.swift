// A child process for ArcaFleetTests' ChildProcessTests: starts a child through ArcaFleet's
// ChildProcess from a process whose descriptors 0, 1 and 2 are closed, and writes what came
// back to a file (its own stdout and stderr are closed).
//
//   arca-test-spawn-probe natural <result-file>
//       closes 0-2, then spawns: the pipes take the lowest free numbers, 0-2 among them.
//   arca-test-spawn-probe arranged <result-file>
//       closes 0-2; the stdin pipe's read end lands on 2, stdout's write end is placed on 0
//       and stderr's on 1 (what other threads closing and reopening descriptors can leave).
//
// The child: /bin/sh -c 'cat; echo out; echo err >&2' with "in\n" on its stdin. The result
// file: the exit status, a newline, what the stdout pipe carried, a 0x01 byte, what the
// stderr pipe carried. Uses only package API and plain Glibc (it is also built in release).
import ArcaFleet
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

let words = CommandLine.arguments
guard words.count == 3, words[1] == "natural" || words[1] == "arranged" else { exit(2) }
let arranged = words[1] == "arranged"

for fd: Int32 in 0...2 { close(fd) }
if arranged {
    // 0 and 1 held by /dev/null until the pipes replace them; 2 stays free for the first pipe.
    guard open("/dev/null", O_RDONLY | O_CLOEXEC) == 0, open("/dev/null", O_RDONLY | O_CLOEXEC) == 1 else { exit(3) }
}

/// Runs the child and returns the result file's bytes.
func run(arranged: Bool) -> [UInt8] {
    var calls = 0
    // A pipe; in `arranged`, the write ends of the second and third are moved onto 0 and 1.
    let makePipe = { () throws(Errno) -> ChildProcess.Pipe in
        defer { calls += 1 }
        let pipe = try FileDescriptor.pipe()
        guard arranged, calls > 0 else { return pipe }
        let target = Int32(calls - 1)
        try nothingOrErrno { dup2(pipe.write.rawValue, target) }.get()
        try nothingOrErrno { fcntl(target, F_SETFD, FD_CLOEXEC) }.get()
        pipe.write.close()
        return (pipe.read, FileDescriptor(rawValue: target))
    }
    do {
        let child = try ChildProcess(
            path: "/bin/sh", arguments: ["-c", "cat; echo out; echo err >&2"], input: Array("in\n".utf8),
            makingPipe: makePipe)
        let finished = child.finish()
        return Array("\(finished.status)\n".utf8) + finished.output + [1] + Array(finished.error.utf8)
    } catch {
        return Array("spawn failed: \(error)\n".utf8)
    }
}

let result = run(arranged: arranged)
let out = open(words[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
guard out >= 0 else { exit(4) }
_ = result.withUnsafeBytes { raw in Result { () throws(Errno) in try FileDescriptor(rawValue: out).writeAll(raw) } }
close(out)
