#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// The C library's `stdout` and `stderr` are mutable globals, which Swift 6 refuses to
// touch from any context; diagnostics go to the descriptors instead (stderr is
// unbuffered, so nothing is reordered), and a flush of stdio uses `fflush(nil)`.
extension FileDescriptor {
    /// Descriptor 0.
    public static let standardInput = FileDescriptor(rawValue: 0)
    /// Descriptor 1.
    public static let standardOutput = FileDescriptor(rawValue: 1)
    /// Descriptor 2.
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Writes all of `text`'s UTF-8. The corresponding C function is `write`.
    public func writeAll(_ text: String) throws(Errno) {
        let bytes = Array(text.utf8)
        // withUnsafeBytes rethrows untyped: carry the Errno out as a value.
        let failure: Errno? = bytes.withUnsafeBytes { raw in
            do throws(Errno) { try writeAll(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}
