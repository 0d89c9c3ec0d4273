import ArcaSystem
import Glibc
import Testing

@Suite("Errno and the one EINTR retry")
struct ErrnoTests {
    @Test("named statics carry the C values and names")
    func names() {
        #expect(Errno.noKey.rawValue == ENOKEY)
        #expect(Errno.noKey.name == "ENOKEY")
        #expect(Errno.wouldBlock.rawValue == EWOULDBLOCK)
        #expect(Errno.tooManySymbolicLinks.name == "ELOOP")
        #expect(Errno(rawValue: 4242).name == "errno 4242")
        #expect(Errno.noSuchFileOrDirectory.description == "ENOENT (No such file or directory)")
    }

    @Test("valueOrErrno retries EINTR and returns the next result")
    func retriesInterrupt() {
        var calls = 0
        let result = valueOrErrno { () -> Int32 in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(calls == 3)
        #expect((try? result.get()) == 7)
    }

    @Test("valueOrErrno(retryOnInterrupt: false) reports EINTR once")
    func reportsInterruptWhenAsked() {
        var calls = 0
        let result = valueOrErrno(retryOnInterrupt: false) { () -> Int32 in
            calls += 1
            errno = EINTR
            return -1
        }
        #expect(calls == 1)
        #expect(throws: Errno.interrupted) { try result.get() }
    }

    @Test("any other errno is returned at once, not retried")
    func otherErrnoAtOnce() {
        var calls = 0
        let result = valueOrErrno { () -> Int in
            calls += 1
            errno = EAGAIN
            return -1
        }
        #expect(calls == 1)
        #expect(throws: Errno.wouldBlock) { try result.get() }
    }

    @Test("valueOrNegatedErrno decodes -errno results")
    func negated() {
        #expect(throws: Errno.connectionRefused) { try valueOrNegatedErrno { -Int32(ECONNREFUSED) }.get() }
        #expect((try? valueOrNegatedErrno { Int32(3) }.get()) == 3)
    }
}
