import ArcaTestSupport
import Foundation
import Testing

/// What a finished `arca` process wrote and returned.
struct Run: Equatable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String {
        "status \(status)\nstdout: \(stdout.debugDescription)\nstderr: \(stderr.debugDescription)"
    }
}

/// The `arca` binary built next to the test bundle (`swift build --build-tests` builds it).
let arcaPath: String = builtExecutable("arca")

/// Runs `argv` (argv[0] is the program) with `stdin` (written after `delay` microseconds)
/// and extra environment, and waits.
func run(_ argv: [String], stdin: String = "", environment: [String: String] = [:], delay: useconds_t = 0)
    throws -> Run
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: argv[0])
    process.arguments = Array(argv.dropFirst())
    var env = ProcessInfo.processInfo.environment
    env["ARCA_SOCKET"] = nil
    for (key, value) in environment { env[key] = value }
    process.environment = env
    let input = Pipe()
    let out = Pipe()
    let err = Pipe()
    process.standardInput = input
    process.standardOutput = out
    process.standardError = err
    // A command may exit before reading its stdin (an early error): then the write
    // fails with EPIPE, which must neither kill the test process nor fail the call.
    signal(SIGPIPE, SIG_IGN)
    try process.run()
    if delay > 0 { usleep(delay) }
    try? input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8))
    try? input.fileHandleForWriting.close()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Run(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// Runs `arca` with `arguments`.
func arca(_ arguments: [String], stdin: String = "", environment: [String: String] = [:]) throws -> Run {
    try run([arcaPath] + arguments, stdin: stdin, environment: environment)
}
