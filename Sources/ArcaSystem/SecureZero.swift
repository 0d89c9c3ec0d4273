import CArcaSystem

/// Zeroing memory that held a secret, done one way: every wipe in Arca (byte
/// arrays, `SecretBytes`, pool slots) ends in ``zero(_:)``.
public enum SecureZero {
    /// Zeroes every byte of `buffer` with stores the compiler may not drop as dead,
    /// even when the memory is freed right after. The corresponding C function is `explicit_bzero`.
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        arca_secure_zero(base, buffer.count)
    }

    /// Keeps `buffer` out of core dumps. The corresponding C function is `madvise(MADV_DONTDUMP)`.
    public static func excludeFromCoreDumps(_ buffer: UnsafeMutableRawBufferPointer) throws(Errno) {
        guard let base = buffer.baseAddress else { return }
        try nothingOrErrno { arca_madvise_dontdump(base, buffer.count) }.get()
    }
}
