import ArcaCrypto
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Reads passwords and secrets from stdin (a pipe: line by line, so scripts can
/// drive `init`, `unlock`, `passwd`) or a no-echo prompt on the terminal, through
/// ArcaCrypto's `SecretReader`; its errors become the CLI's, naming what was read.
public struct SecretInput {
    let reader: SecretReader

    /// A reader of `fd` (stdin by default).
    public init(fd: Int32 = 0) { reader = SecretReader(fd: fd) }

    /// Whether the descriptor is a terminal (then prompts are shown and echo is off).
    public var isTerminal: Bool { reader.isTerminal }

    /// One line (without its newline): a password. `prompt` goes to stderr when
    /// stdin is a terminal. Throws when stdin is at its end before any byte.
    public func line(prompt: String, limit: Int = 4096) throws(CLIError) -> SecretBytes {
        do { return try reader.line(prompt: prompt, limit: limit) } catch {
            throw Self.failure(error, what: "password")
        }
    }

    /// An item secret: every byte up to the end of stdin when it is a pipe (one
    /// trailing newline removed), or one no-echo line at a prompt.
    public func secret(prompt: String, limit: Int) throws(CLIError) -> SecretBytes {
        do { return try reader.secret(prompt: prompt, limit: limit) } catch {
            throw Self.failure(error, what: reader.isTerminal ? "password" : "secret")
        }
    }

    private static func failure(_ error: SecretReadError, what: String) -> CLIError {
        switch error {
        case .outOfMemory: .failure(what: what, why: "out of secure memory")
        case .tooLong(let limit): .failure(what: what, why: "longer than \(limit) bytes")
        case .noInput: .failure(what: what, why: "no \(what) on stdin")
        case .read(let errno):
            .failure(what: what, why: "cannot read stdin: " + String(cString: strerror(errno.rawValue)))
        }
    }
}

/// Terminal checks for the output side.
enum Terminal {
    /// Whether stdout is a terminal.
    static var standardOutputIsTerminal: Bool { isatty(1) == 1 }
}
