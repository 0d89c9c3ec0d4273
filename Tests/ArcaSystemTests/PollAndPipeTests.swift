import ArcaSystem
import Glibc
import Testing

@Suite("FileDescriptor.pipe and poll over several descriptors")
struct PollAndPipeTests {
    @Test("pipe: both ends close-on-exec; non-blocking read of an empty pipe is EAGAIN")
    func pipeFlags() throws {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        defer {
            ends.read.close()
            ends.write.close()
        }
        for end in [ends.read, ends.write] {
            #expect(fcntl(end.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)
            #expect(fcntl(end.rawValue, F_GETFL) & O_NONBLOCK == O_NONBLOCK)
        }
        var byte: UInt8 = 0
        #expect(throws: Errno.wouldBlock) {
            _ = try withUnsafeMutableBytes(of: &byte) { raw throws(Errno) in try ends.read.read(into: raw) }
        }
    }

    @Test("pipe without nonBlocking stays blocking (only close-on-exec is set)")
    func pipeBlocking() throws {
        let ends = try FileDescriptor.pipe()
        defer {
            ends.read.close()
            ends.write.close()
        }
        #expect(fcntl(ends.read.rawValue, F_GETFL) & O_NONBLOCK == 0)
        #expect(fcntl(ends.read.rawValue, F_GETFD) & FD_CLOEXEC == FD_CLOEXEC)
    }

    @Test("poll reports the one readable descriptor of two, and all zero on a timeout")
    func pollTwo() throws {
        let quiet = try FileDescriptor.pipe()
        let busy = try FileDescriptor.pipe()
        defer {
            for fd in [quiet.read, quiet.write, busy.read, busy.write] { fd.close() }
        }
        let watched = [(quiet.read, events: Int16(POLLIN)), (busy.read, events: Int16(POLLIN))]
        #expect(try FileDescriptor.poll(watched, milliseconds: 0) == [0, 0])
        try withUnsafeBytes(of: UInt8(1)) { raw throws(Errno) in _ = try busy.write.write(raw) }
        #expect(try FileDescriptor.poll(watched, milliseconds: 1_000) == [0, Int16(POLLIN)])
    }
}
