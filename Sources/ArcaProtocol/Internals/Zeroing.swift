import ArcaSystem

/// Overwrites the elements `range` of `bytes` with zero in place, through
/// ArcaSystem's one zeroing primitive (`explicit_bzero`), whose stores cannot be
/// dropped as dead even when the array is released right after.
func zeroInPlace(_ bytes: inout [UInt8], _ range: Range<Int>) {
    bytes.withUnsafeMutableBytes { buffer in
        let range = range.clamped(to: 0..<buffer.count)
        SecureZero.zero(UnsafeMutableRawBufferPointer(rebasing: buffer[range]))
    }
}
