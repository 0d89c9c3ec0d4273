/// Overwrites every element of `bytes` with zero in place. Not optimised and
/// never inlined, so the stores cannot be dropped as dead even when the array
/// is released right after.
@_optimize(none)
@inline(never)
func zeroInPlace(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        base.update(repeating: 0, count: buffer.count)
    }
}
