import ArcaCrypto
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Reads passwords and secrets from stdin (a pipe: line by line, so scripts can
/// drive `init`, `unlock`, `passwd`) or a no-echo prompt on the terminal. The
/// bytes go straight into `SecretBytes`; they never become a `String`.
public struct SecretInput {
    /// The descriptor read from (0).
    let fd: Int32

    /// A reader of `fd` (stdin by default).
    public init(fd: Int32 = 0) { self.fd = fd }

    /// Whether the descriptor is a terminal (then prompts are shown and echo is off).
    public var isTerminal: Bool { isatty(fd) == 1 }

    /// One line (without its newline): a password. `prompt` goes to stderr when
    /// stdin is a terminal. Throws when stdin is at its end before any byte.
    public func line(prompt: String, limit: Int = 4096) throws(CLIError) -> SecretBytes {
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
        return try read(limit: limit, stopAtNewline: true, what: "password")
    }

    /// An item secret: every byte up to the end of stdin when it is a pipe (one
    /// trailing newline removed), or one no-echo line at a prompt.
    public func secret(prompt: String, limit: Int) throws(CLIError) -> SecretBytes {
        if isTerminal { return try line(prompt: prompt, limit: limit) }
        return try read(limit: limit, stopAtNewline: false, what: "secret")
    }

    private func read(limit: Int, stopAtNewline: Bool, what: String) throws(CLIError) -> SecretBytes {
        let buffer: SecretBytes
        do { buffer = try SecretBytes(count: limit + 1) } catch {
            throw .failure(what: what, why: "out of secure memory")
        }
        var count = 0
        var sawEnd = false
        var sawAnything = false
        let stream = FileDescriptor(rawValue: fd)
        let failure: Errno? = buffer.withUnsafeMutableBytes { raw -> Errno? in
            while count <= limit {
                // A line is read a byte at a time so that the next line stays in the
                // pipe for the next prompt (passwd reads two).
                let want = stopAtNewline ? 1 : limit + 1 - count
                let n: Int
                switch Result(catching: { () throws(Errno) in
                    try stream.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count..<(count + want)]))
                }) {
                case .success(let read): n = read
                case .failure(let error): return error
                }
                if n == 0 {
                    sawEnd = true
                    return nil
                }
                sawAnything = true
                if stopAtNewline, raw[count] == 0x0a {
                    raw[count] = 0
                    return nil
                }
                count += n
            }
            return nil
        }
        if let failure {
            throw .failure(what: what, why: "cannot read stdin: " + String(cString: strerror(failure.rawValue)))
        }
        guard count <= limit else { throw .failure(what: what, why: "longer than \(limit) bytes") }
        if stopAtNewline, sawEnd, !sawAnything { throw .failure(what: what, why: "no \(what) on stdin") }
        if !stopAtNewline, count > 0, buffer.withUnsafeBytes({ $0[count - 1] }) == 0x0a { count -= 1 }
        do { return try buffer.slice(0..<count) } catch { throw .failure(what: what, why: "out of secure memory") }
    }
}

/// Terminal checks for the output side.
enum Terminal {
    /// Whether stdout is a terminal.
    static var standardOutputIsTerminal: Bool { isatty(1) == 1 }
}
