/// A run of failed accept(2) calls on arcad's listener, and the pause before the next.
///
/// Out of descriptors (`EMFILE`, `ENFILE`), a connection may close any moment: 100 ms.
/// Anything else (a socket that is not listening, `ENOBUFS`, `ENOMEM`) may last: the
/// pause doubles from 10 ms to at most 1 s, so that the accepting threads neither spin
/// nor leave arcad deaf for long once it clears. The first failure of a run is logged,
/// and how many there were once accept works again: a log line per call would flood.
struct AcceptFailures {
    /// Failures in the current run.
    private(set) var count = 0
    /// The first pause of a run, and the longest, in microseconds.
    static let firstPause: UInt32 = 10_000
    static let longestPause: UInt32 = 1_000_000
    static let descriptorPause: UInt32 = 100_000

    /// Counts `error` and returns how long to pause before accepting again (µs).
    mutating func failed(_ error: SystemError) -> UInt32 {
        count += 1
        if count == 1 { Log.warning(Self.warning(for: error)) }
        if Self.outOfDescriptors(error) { return Self.descriptorPause }
        let doublings = UInt32(min(count - 1, 7))
        return min(Self.firstPause << doublings, Self.longestPause)
    }

    /// The line logged for the first failure of a run, with the pauses that follow it.
    static func warning(for error: SystemError) -> String {
        let pauses = outOfDescriptors(error) ? "of 100 ms" : "of up to 1 s"
        return "\(error); accepting again with pauses \(pauses) while it fails"
    }

    private static func outOfDescriptors(_ error: SystemError) -> Bool {
        error.errno == .tooManyOpenFilesInProcess || error.errno == .tooManyOpenFiles
    }

    /// An accept succeeded: the run, if any, is over.
    mutating func succeeded() {
        guard count > 0 else { return }
        Log.notice("accept works again after \(count) failed call\(count == 1 ? "" : "s")")
        count = 0
    }
}
