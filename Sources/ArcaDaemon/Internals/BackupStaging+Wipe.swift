import ArcaSystem

extension BackupStaging {
    /// Zeroes the bytes a staging holds, not its spare capacity: an import reserves its declared
    /// length up front, pages the kernel has not handed out yet, which only the bytes that
    /// arrived have touched. Zeroing the whole capacity (``SecureWipe/zero(_:)``) would make arcad
    /// touch, and so hold, the full cap for every staging it drops.
    static func wipeUsed(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { SecureZero.zero($0) }
    }
}
