import ArcaCrypto
import ArcaKeyring
import ArcaThreads
import Synchronization
import Testing

@testable import ArcaDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// A reused connection thread carries nothing of its last connection to the next:
/// not what its frames left on the stack, not a key in its thread keyring.
@Suite struct ConnectionWorkersHygieneTests {
    /// 32 bytes no stack holds by chance.
    static let pattern: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &* 37) }

    /// Writes `pattern` 64 KiB below the caller's frame, where a deep call of a
    /// request's path would have left its locals.
    @inline(never) static func leavePatternDeepOnStack() {
        var marker: UInt8 = 0
        withUnsafeMutablePointer(to: &marker) { here in
            let deep = UnsafeMutableRawPointer(here) - 64 * 1024
            pattern.withUnsafeBytes { deep.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
    }

    /// Whether `pattern` occurs in the memory at `range`.
    static func memory(_ range: Range<UInt>, contains pattern: [UInt8]) -> Bool {
        guard let base = UnsafeRawPointer(bitPattern: range.lowerBound) else { return false }
        let bytes = UnsafeRawBufferPointer(start: base, count: range.count)
        let first = pattern[0]
        var i = 0
        while i + pattern.count <= bytes.count {
            if bytes[i] == first, pattern.withUnsafeBytes({ memcmp(base + i, $0.baseAddress!, $0.count) }) == 0 {
                return true
            }
            i += 1
        }
        return false
    }

    @Test func aWaitingThreadKeepsNothingOfTheLastJobOnItsStack() throws {
        let listener = FakeListener()
        defer { listener.stop() }
        let workers = ConnectionWorkers(maxIdle: 1)
        try workers.start(listener)
        let stack = Mutex<Range<UInt>?>(nil)
        let foundInJob = Mutex(false)
        listener.connect {
            Self.leavePatternDeepOnStack()
            let range = try? UsedStack.range()
            // The scan sees the pattern while the job runs: its absence later means something.
            foundInJob.withLock { $0 = range.map { Self.memory($0, contains: Self.pattern) } ?? false }
            stack.withLock { $0 = range }
        }
        // The thread that served it accepts again, beside the first.
        #expect(ConnectionWorkersTests.eventually { workers.threadsAccepting == 2 })
        let range = try #require(stack.withLock { $0 })
        #expect(range.count == 512 * 1024)
        #expect(foundInJob.withLock { $0 })
        #expect(!Self.memory(range, contains: Self.pattern))
    }
}

/// Needs root's kernel keyring (a thread keyring of its own, really created).
@Suite struct ConnectionWorkersRootTests {
    @Test func aKeyLeftInTheThreadKeyringDoesNotReachTheNextJobAsRoot() throws {
        try #require(getuid() == 0, "ConnectionWorkersRootTests must run as root")
        let listener = FakeListener()
        defer { listener.stop() }
        let workers = ConnectionWorkers(maxIdle: 1)
        try workers.start(listener)
        let threads = Mutex<[UInt]>([])
        let added = Mutex<Int32?>(nil)
        let seenByNext = Mutex<[KeySerial]?>(nil)
        listener.connect {
            threads.withLock { $0.append(UInt(pthread_self())) }
            let payload = try? SecretBytes(count: 3) { $0[0] = 7 }
            let key = try? KeySerial.add(
                type: "user", description: "login16b-thread-leftover", payload: payload, to: .threadKeyring)
            added.withLock { $0 = key?.rawValue }
        }
        #expect(ConnectionWorkersTests.eventually { workers.threadsAccepting == 2 })
        let key = try #require(added.withLock { $0 })
        let first = try #require(threads.withLock { $0.first })
        // The next connection goes to that same thread.
        listener.connect(onThread: first) {
            threads.withLock { $0.append(UInt(pthread_self())) }
            // Without creating it: an absent thread keyring holds nothing either.
            let links = (try? KeySerial.threadKeyring.resolve(create: false)).map { (try? $0.links()) ?? [] } ?? []
            seenByNext.withLock { $0 = links }
        }
        #expect(ConnectionWorkersTests.eventually { seenByNext.withLock { $0 } != nil })
        #expect(Set(threads.withLock { $0 }).count == 1, "the second job ran on the same thread")
        #expect(seenByNext.withLock { $0 } == [])
        // Its only link was the thread keyring, so clearing that left the key to the
        // kernel's garbage collector; nothing to remove here.
        #expect(key > 0)
        #expect(workers.threadsStarted == 2)
    }
}
