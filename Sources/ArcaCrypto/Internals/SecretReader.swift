import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Why a secret could not be read from a descriptor.
public enum SecretReadError: Error, Sendable, Equatable {
    /// No locked memory for the buffer.
    case outOfMemory
    /// More than the limit's bytes before the end (of the line).
    case tooLong(limit: Int)
    /// The end of input before any byte of a line.
    case noInput
    /// read(2) failed.
    case read(Errno)
}

/// Reads passwords and secrets from a descriptor (stdin by default): from a pipe line by
/// line, so scripts can drive several prompts, or at a no-echo prompt on a terminal. The
/// bytes go straight into `SecretBytes`; they never become a `String`. The one reader of
/// the `arca` CLI and of `arca-sync recover`.
public struct SecretReader: Sendable {
    /// The descriptor read from.
    public let fd: Int32

    /// A reader of `fd` (stdin by default).
    public init(fd: Int32 = 0) { self.fd = fd }

    /// Whether the descriptor is a terminal (then prompts are shown and echo is off).
    public var isTerminal: Bool { isatty(fd) == 1 }

    /// One line (without its newline): a password. `prompt` goes to stderr when the
    /// descriptor is a terminal.
    public func line(prompt: String, limit: Int = 4096) throws(SecretReadError) -> SecretBytes {
        let terminal = isTerminal
        var saved = termios()
        if terminal {
            try? FileDescriptor.standardError.writeAll(prompt)
            tcgetattr(fd, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        defer {
            if terminal {
                tcsetattr(fd, TCSAFLUSH, &saved)
                try? FileDescriptor.standardError.writeAll("\n")
            }
        }
        return try read(limit: limit, stopAtNewline: true)
    }

    /// An item secret: every byte up to the end when the descriptor is a pipe (one
    /// trailing newline removed), or one no-echo line at a prompt.
    public func secret(prompt: String, limit: Int) throws(SecretReadError) -> SecretBytes {
        if isTerminal { return try line(prompt: prompt, limit: limit) }
        return try read(limit: limit, stopAtNewline: false)
    }

    private func read(limit: Int, stopAtNewline: Bool) throws(SecretReadError) -> SecretBytes {
        let buffer: SecretBytes
        do { buffer = try SecretBytes(count: limit + 1) } catch { throw .outOfMemory }
        var count = 0
        var sawEnd = false
        var sawAnything = false
        let stream = FileDescriptor(rawValue: fd)
        do throws(Errno) {
            try buffer.withUnsafeMutableBytes { raw throws(Errno) in
                while count <= limit {
                    // A line is read a byte at a time so that the next line stays in the
                    // pipe for the next prompt (passwd reads two).
                    let want = stopAtNewline ? 1 : limit + 1 - count
                    let n = try stream.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count..<(count + want)]))
                    if n == 0 {
                        sawEnd = true
                        return
                    }
                    sawAnything = true
                    if stopAtNewline, raw[count] == 0x0a {
                        raw[count] = 0
                        return
                    }
                    count += n
                }
            }
        } catch {
            throw .read(error)
        }
        guard count <= limit else { throw .tooLong(limit: limit) }
        if stopAtNewline, sawEnd, !sawAnything { throw .noInput }
        if !stopAtNewline, count > 0, buffer.withUnsafeBytes({ $0[count - 1] }) == 0x0a { count -= 1 }
        do { return try buffer.slice(0..<count) } catch { throw .outOfMemory }
    }
}
