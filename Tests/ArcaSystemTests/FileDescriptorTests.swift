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

    @Test("status decodes st_mode's type and permissions, the owner, links and size")
    func statusDecodes() throws {
        var template = Array("/tmp/arca-status-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
            .withMemoryRebound(to: UInt8.self, capacity: template.count) { String(cString: $0) }
        let file = directory + "/file"
        let second = directory + "/second"
        let fifo = directory + "/fifo"
        defer {
            for path in [file, second, fifo] { unlink(path) }
            rmdir(directory)
        }
        try #require(chmod(directory, 0o750) == 0)
        let dir = try FileDescriptor.open(directory, O_RDONLY | O_DIRECTORY)
        defer { dir.close() }
        let dirStatus = try dir.status()
        #expect(dirStatus.isDirectory && !dirStatus.isRegularFile)
        #expect(dirStatus.permissions == 0o750 && dirStatus.owner == getuid())

        let fd = try FileDescriptor.open(file, O_RDWR | O_CREAT | O_EXCL)
        defer { fd.close() }
        try #require(fchmod(fd.rawValue, 0o4640) == 0 && link(file, second) == 0)
        try [UInt8]([1, 2, 3, 4, 5]).withUnsafeBytes { try fd.writeAll($0) }
        let fileStatus = try fd.status()
        #expect(fileStatus.isRegularFile && !fileStatus.isDirectory)
        #expect(fileStatus.owner == getuid() && fileStatus.permissions == 0o4640)
        #expect(fileStatus.linkCount == 2 && fileStatus.size == 5)

        // Neither a directory nor a regular file: a character device and a FIFO.
        let null = try FileDescriptor.open("/dev/null", O_RDONLY)
        defer { null.close() }
        let nullStatus = try null.status()
        #expect(!nullStatus.isDirectory && !nullStatus.isRegularFile && nullStatus.permissions == 0o666)
        try #require(mkfifo(fifo, 0o600) == 0)
        let pipe = try FileDescriptor.open(fifo, O_RDONLY | O_NONBLOCK)
        defer { pipe.close() }
        let fifoStatus = try pipe.status()
        #expect(!fifoStatus.isDirectory && !fifoStatus.isRegularFile && fifoStatus.permissions == 0o600)
    }

    @Test("Heap.mapPages maps zeroed writable pages, and nil (not MAP_FAILED) when mmap fails")
    func mapPages() throws {
        let size = 2 * Int(sysconf(Int32(_SC_PAGESIZE)))
        let pages = try #require(Heap.mapPages(size))
        defer { munmap(pages, size) }
        let bytes = UnsafeMutableRawBufferPointer(start: pages, count: size)
        #expect(bytes.allSatisfy { $0 == 0 })
        bytes[size - 1] = 0x5A
        #expect(bytes[size - 1] == 0x5A)
        #expect(Heap.mapPages(Int.max) == nil)
    }

    @Test(
        "duplicate gives a close-on-exec descriptor at or above its floor for the same pipe, and EBADF for a closed one"
    )
    func duplicate() throws {
        let pipe = try FileDescriptor.pipe()
        defer {
            pipe.read.close()
            pipe.write.close()
        }
        let copy = try pipe.write.duplicate(atLeast: 40)
        defer { copy.close() }
        #expect(copy.rawValue >= 40)
        #expect(fcntl(copy.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)
        try copy.writeAll("AB")
        var two = [UInt8](repeating: 0, count: 2)
        #expect(try two.withUnsafeMutableBytes { try pipe.read.readExactly(into: $0) })
        #expect(two == [0x41, 0x42])
        let closed = try pipe.write.duplicate()
        #expect(closed.rawValue >= 3)
        closed.close()
        #expect(throws: Errno.badFileDescriptor) { try closed.duplicate() }
    }
}
