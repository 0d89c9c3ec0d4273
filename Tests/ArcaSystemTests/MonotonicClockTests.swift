import ArcaSystem
import Glibc
import Testing

/// `MonotonicClock`: the one reader of CLOCK_MONOTONIC (arcad's deadlines, the vault's
/// checkpointer, Argon2id's calibration, sd-bus's timeouts), in three units of one reading.
@Suite("MonotonicClock: CLOCK_MONOTONIC in nanoseconds, milliseconds and seconds")
struct MonotonicClockTests {
    static func kernelNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test("each unit lies between two readings of the kernel's clock")
    func bracketed() {
        let before = Self.kernelNanoseconds()
        let nanoseconds = MonotonicClock.nanoseconds()
        let milliseconds = MonotonicClock.milliseconds()
        let seconds = MonotonicClock.seconds()
        let after = Self.kernelNanoseconds()
        #expect(before <= nanoseconds && nanoseconds <= after)
        #expect(Int(before / 1_000_000) <= milliseconds && milliseconds <= Int(after / 1_000_000))
        #expect(Double(before) / 1e9 <= seconds && seconds <= Double(after) / 1e9)
        #expect(nanoseconds > 0, "since the boot, not the epoch: well below the wall clock")
        #expect(seconds < Double(time(nil)))
    }

    @Test("it never goes back")
    func monotonic() {
        var last = MonotonicClock.nanoseconds()
        for _ in 0..<10_000 {
            let now = MonotonicClock.nanoseconds()
            #expect(now >= last)
            last = now
        }
    }
}
