import ArcaSystem
import Glibc
import Testing

@Suite("FileDescriptor: full reads and writes, zeroing")
struct FileDescriptorTests {
    /// A pipe, closed by the caller.
    private func pipePair() throws -> (read: FileDescriptor, write: FileDescriptor) {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }

    @Test("readExactly gathers several short writes into one buffer")
    func readExactlyAcrossShortWrites() throws {
        let (r, w) = try pipePair()
        defer { r.close() }
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try w.writeAll($0) }
        try [UInt8]([4, 5]).withUnsafeBytes { try w.writeAll($0) }
        var buffer = [UInt8](repeating: 0, count: 5)
        let full = try buffer.withUnsafeMutableBytes { try r.readExactly(into: $0) }
        #expect(full)
        #expect(buffer == [1, 2, 3, 4, 5])
        w.close()
    }

    @Test("readExactly reports an early end of file with what arrived")
    func readExactlyEarlyEnd() throws {
        let (r, w) = try pipePair()
        defer { r.close() }
        try [UInt8]([9, 8]).withUnsafeBytes { try w.writeAll($0) }
        w.close()
        var buffer = [UInt8](repeating: 0, count: 4)
        let full = try buffer.withUnsafeMutableBytes { try r.readExactly(into: $0) }
        #expect(!full)
        #expect(buffer == [9, 8, 0, 0])
    }

    @Test("a write to a closed descriptor throws EBADF")
    func badDescriptor() throws {
        let (r, w) = try pipePair()
        r.close()
        w.close()
        #expect(throws: Errno.badFileDescriptor) { try [UInt8]([1]).withUnsafeBytes { try w.writeAll($0) } }
    }

    @Test("open sets close-on-exec; a missing file is ENOENT")
    func openCloexec() throws {
        let fd = try FileDescriptor.open("/proc/self/status", O_RDONLY)
        defer { fd.close() }
        #expect(fcntl(fd.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)
        #expect(throws: Errno.noSuchFileOrDirectory) { try FileDescriptor.open("/nonexistent/arca-sys", O_RDONLY) }
    }

    @Test("SecureZero zeroes every byte, read back")
    func zeroReadBack() {
        var bytes = [UInt8](repeating: 0xA5, count: 100)
        bytes.withUnsafeMutableBytes { SecureZero.zero(UnsafeMutableRawBufferPointer(rebasing: $0[10..<90])) }
        #expect(bytes[0..<10].allSatisfy { $0 == 0xA5 })
        #expect(bytes[10..<90].allSatisfy { $0 == 0 })
        #expect(bytes[90...].allSatisfy { $0 == 0xA5 })
    }
}
