import ArcaSystem
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaFleet

/// ChildProcess (etcdctl's runner): descriptors are closed on every failure path.
@Suite("ChildProcess: a failed spawn or pipe leaves no descriptor open")
struct ChildProcessTests {
    /// How many descriptors this process has open (/proc/self/fd).
    private static func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    /// Runs `body` (which must leave no descriptor behind) 20 times and compares the count of
    /// open descriptors before and after. Other suites in this process open and close
    /// descriptors meanwhile, so a round that grew is tried again, up to 5 rounds: a leak of
    /// one descriptor per call grows every round by 20 or more.
    private static func expectNoGrowth(_ body: () throws -> Void) throws {
        var growth: [Int] = []
        for _ in 0..<5 {
            let before = try openDescriptors()
            for _ in 0..<20 { try body() }
            let after = try openDescriptors()
            if after <= before { return }
            growth.append(after - before)
        }
        Issue.record("open descriptors grew in every round: \(growth)")
    }

    @Test("spawning a missing executable fails with its error and leaks none of the six pipe ends")
    func missingExecutable() throws {
        try Self.expectNoGrowth {
            #expect(throws: FleetError.etcd("cannot run /nonexistent/arca-etcdctl: No such file or directory")) {
                try ChildProcess(path: "/nonexistent/arca-etcdctl", arguments: ["get", "x"], input: [1, 2, 3])
            }
        }
    }

    @Test("a child that runs: its stdin, stdout and exit status, and its descriptors closed after")
    func runs() throws {
        try Self.expectNoGrowth {
            let child = try ChildProcess(path: "/bin/cat", arguments: [], input: Array("a\nb\n".utf8))
            let result = child.finish()
            #expect(result.status == 0)
            #expect(result.output == Array("a\nb\n".utf8))
            #expect(result.error == "")
        }
        let failing = try ChildProcess(path: "/bin/sh", arguments: ["-c", "echo oops >&2; exit 3"], input: [])
        let result = failing.finish()
        #expect(result.status == 3)
        #expect(result.error == "oops\n")
    }

    @Test("when the second or third pipe fails, the pipes already made are closed")
    func pipeFailsPartWay() throws {
        for failing in 1..<3 {
            // Each pipe made, with the inode of each end, to tell a closed descriptor from
            // its number reused by another suite's open meanwhile.
            var made: [(FileDescriptor, ino_t)] = []
            var calls = 0
            #expect(throws: Errno.tooManyOpenFilesInProcess) {
                try ChildProcess.pipes(3) { () throws(Errno) -> ChildProcess.Pipe in
                    defer { calls += 1 }
                    if calls == failing { throw .tooManyOpenFilesInProcess }
                    let pipe = try FileDescriptor.pipe()
                    for end in [pipe.read, pipe.write] {
                        var info = stat()
                        #expect(fstat(end.rawValue, &info) == 0)
                        made.append((end, info.st_ino))
                    }
                    return pipe
                }
            }
            #expect(calls == failing + 1)
            #expect(made.count == 2 * failing)
            for (end, inode) in made {
                var info = stat()
                let open = fstat(end.rawValue, &info) == 0 && info.st_ino == inode
                #expect(!open, "pipe end \(end.rawValue) of call \(failing) still open")
                if open { end.close() }
            }
        }
        // All three made: returned open, in order.
        let pipes = try ChildProcess.pipes(3) { () throws(Errno) in try FileDescriptor.pipe() }
        #expect(pipes.count == 3)
        for pipe in pipes {
            #expect(fcntl(pipe.read.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)
            pipe.read.close()
            pipe.write.close()
        }
    }

    /// A parent with descriptors 0-2 closed: the pipe ends take those numbers, and the spawn's
    /// dup2s onto 0, 1, 2 must not read an end an earlier dup2 overwrote. `arranged` puts
    /// stdout's write end on 0 and stderr's on 1 (the old code gave the child its stdin pipe
    /// on all three: "out" and "err" were lost): `arranged` is the regression test. `natural`
    /// (whatever numbers the pipes happen to get) passes on the old code too; it stays as a
    /// check of the common case.
    @Test(
        "a parent started with 0-2 closed: stdin, stdout and stderr each on its own pipe",
        arguments: ["natural", "arranged"])
    func parentWithoutStandardStreams(mode: String) throws {
        let result = NSTemporaryDirectory() + "arca-spawn-probe-\(getpid())-\(mode)"
        defer { try? FileManager.default.removeItem(atPath: result) }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: builtExecutable("arca-test-spawn-probe"))
        probe.arguments = [mode, result]
        try probe.run()
        probe.waitUntilExit()
        #expect(probe.terminationStatus == 0)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: result)))
        #expect(String(decoding: bytes, as: UTF8.self) == "0\nin\nout\n\u{1}err\n")
    }
}
