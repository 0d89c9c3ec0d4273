import ArcaSystem
import Testing

@testable import ArcaDaemon

/// The pauses between failed accept(2) calls.
@Suite struct AcceptFailuresTests {
    @Test("EINVAL-like failures pause 10 ms doubling to 1 s; out of descriptors 100 ms; a success ends the run")
    func pauses() {
        var failures = AcceptFailures()
        let invalid = SystemError(call: "accept", errno: .invalidArgument)
        let pauses = (0..<10).map { _ in failures.failed(invalid) }
        #expect(pauses == [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_000_000, 1_000_000, 1_000_000])
        #expect(failures.count == 10)
        #expect(failures.failed(SystemError(call: "accept", errno: .tooManyOpenFilesInProcess)) == 100_000)
        failures.succeeded()
        #expect(failures.count == 0)
        #expect(failures.failed(invalid) == 10_000)
    }

    @Test("the logged line names the real bound: 100 ms out of descriptors, up to 1 s otherwise")
    func warning() {
        #expect(
            AcceptFailures.warning(for: SystemError(call: "accept", errno: .tooManyOpenFilesInProcess))
                == "accept: Too many open files; accepting again with pauses of 100 ms while it fails")
        #expect(
            AcceptFailures.warning(for: SystemError(call: "accept", errno: .tooManyOpenFiles))
                == "accept: Too many open files in system; accepting again with pauses of 100 ms while it fails")
        #expect(
            AcceptFailures.warning(for: SystemError(call: "accept", errno: .invalidArgument))
                == "accept: Invalid argument; accepting again with pauses of up to 1 s while it fails")
    }
}
