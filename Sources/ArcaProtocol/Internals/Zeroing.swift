/// Overwrites the elements `range` of `bytes` with zero in place. Not
/// optimised and never inlined, so the stores cannot be dropped as dead even
/// when the array is released right after.
@_optimize(none)
@inline(never)
func zeroInPlace(_ bytes: inout [UInt8], _ range: Range<Int>) {
    bytes.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        let range = range.clamped(to: 0..<buffer.count)
        (base + range.lowerBound).update(repeating: 0, count: range.count)
    }
}
