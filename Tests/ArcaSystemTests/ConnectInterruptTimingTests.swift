import ArcaSystem
import Foundation
import Glibc
import Testing

/// The timeout bounds the whole connect, signals included: Linux drops an interrupted Unix
/// connect, and the connect made again must wait only for the time left, not a full
/// `SO_SNDTIMEO` again (pam_arca(8): the timeout bounds each wait). Wall-clock, so it runs alone.
@Suite("connect interrupted late: the timeout still bounds the whole connect", .serialized)
struct ConnectInterruptTimingTests {
    @Test("Unix, 2 s timeout, full listener, signal at 1.4 s: wouldBlock at 2 s, not 3.4 s")
    func unixInterruptedLateKeepsDeadline() throws {
        let timeout = 2_000
        let unix = try ConnectInterruptTests.fullUnixListener()
        defer { unix.close() }
        try ConnectInterruptTests.withInterruptingHandler {
            let start = ContinuousClock.now
            let attempt = ConnectInterruptTests.Attempt { () throws(Errno) in
                try UnixSocket.connect(path: unix.path, timeoutMilliseconds: timeout)
            }
            #expect(ConnectInterruptTests.eventually { attempt.systemCall == ConnectInterruptTests.connectCall })
            // Signal at 70% of the timeout.
            let late = start + .milliseconds(timeout * 7 / 10)
            let (seconds, attoseconds) = (late - ContinuousClock.now).components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
            attempt.interrupt()
            // The connect made again (Linux dropped the first) is blocked in connect(2) again.
            #expect(ConnectInterruptTests.eventually { attempt.systemCall == ConnectInterruptTests.connectCall })
            let result = try #require(attempt.result())
            let elapsed = ContinuousClock.now - start
            if case .success(let fd) = result { fd.close() }
            #expect(throws: Errno.wouldBlock) { try result.get() }
            #expect(elapsed >= .milliseconds(timeout - 100), "failed before its timeout: \(elapsed)")
            #expect(elapsed < .milliseconds(timeout + 500), "waited past its timeout: \(elapsed)")
        }
    }
}
