import ArcaCrypto
import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One secret line from stdin straight into `SecretBytes` (never a `String`): the recovery
/// key of `arca sync recover`. On a terminal the prompt goes to stderr and echo is off; from
/// a pipe the line is read a byte at a time, as arca's own prompts read it.
enum SecretLine {
    /// The line without its newline; nil at end of input before any byte, or past `limit` bytes.
    static func read(prompt: String, limit: Int) throws(SyncAgentError) -> SecretBytes? {
        let terminal = isatty(0) == 1
        var saved = termios()
        if terminal {
            Console.err(prompt)
            tcgetattr(0, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &quiet)
        }
        defer {
            if terminal {
                tcsetattr(0, TCSAFLUSH, &saved)
                Console.err("\n")
            }
        }
        let buffer: SecretBytes
        do { buffer = try SecretBytes(count: limit + 1) } catch { throw .usage("out of secure memory") }
        var count = 0
        var ended = false
        let stdin = FileDescriptor(rawValue: 0)
        let failure: Errno? = buffer.withUnsafeMutableBytes { raw -> Errno? in
            while count <= limit {
                let n: Int
                do throws(Errno) {
                    n = try stdin.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[count..<(count + 1)]))
                } catch {
                    return error
                }
                if n == 0 {
                    ended = true
                    return nil
                }
                if raw[count] == 0x0a {
                    raw[count] = 0
                    return nil
                }
                count += 1
            }
            return nil
        }
        if let failure { throw .usage("cannot read stdin: \(failure)") }
        guard count <= limit, !(ended && count == 0) else { return nil }
        do { return try buffer.slice(0..<count) } catch { throw .usage("out of secure memory") }
    }
}
