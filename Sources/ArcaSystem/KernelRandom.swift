import CArcaSystem

/// Random bytes straight from the kernel, for callers that must not wait for a
/// crypto library's initialisation (the secure pool's free-list cookie).
public enum KernelRandom {
    /// One random word, or nil if the kernel gave fewer bytes. The corresponding C function is `getrandom`.
    public static func word() -> UInt? {
        var word: UInt = 0
        let got = withUnsafeMutableBytes(of: &word) { arca_getrandom($0.baseAddress, $0.count) }
        return got == MemoryLayout<UInt>.size ? word : nil
    }
}
