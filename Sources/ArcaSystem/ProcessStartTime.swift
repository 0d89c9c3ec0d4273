#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The start time of a process: with its pid, it names one process, since a pid the kernel
/// reuses belongs to a process started later.
public enum ProcessStartTime {
    /// Field 22 of `/proc/PID/stat` (clock ticks after boot); nil when there is no such
    /// process, the file cannot be read or parsed, or (`ignoringZombies`) the process has
    /// exited and waits to be reaped. Parsed by hand, without `split` or `String`: a fresh
    /// login process pays for each generic type it instantiates.
    public static func of(pid: UInt32, ignoringZombies: Bool = false) -> UInt64? {
        guard let fd = try? FileDescriptor.open("/proc/\(pid)/stat", O_RDONLY) else { return nil }
        defer { fd.close() }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let count = bytes.withUnsafeMutableBytes { (try? fd.read(into: $0)) ?? 0 }
        guard count > 0 else { return nil }
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the fields
        // start after the last ')'; field 3 (state) is the first after it.
        guard let close = bytes[0..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var field = 2
        var value: UInt64 = 0
        var inField = false
        for byte in bytes[(close + 1)..<count] {
            if byte == UInt8(ascii: " ") {
                if inField && field == 22 { return value }
                inField = false
                continue
            }
            if !inField {
                inField = true
                field += 1
                value = 0
            }
            if field == 3 && ignoringZombies && (byte == UInt8(ascii: "Z") || byte == UInt8(ascii: "X")) {
                return nil
            }
            if field == 22 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                value = times10 &+ UInt64(byte - UInt8(ascii: "0"))
            }
        }
        return nil
    }

    /// The start time of the calling process.
    public static var current: UInt64? { of(pid: UInt32(bitPattern: getpid())) }
}
