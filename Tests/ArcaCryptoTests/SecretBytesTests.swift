import Synchronization
import Testing

@testable import ArcaCrypto

@Suite("SecretBytes")
struct SecretBytesTests {
    @Test("wipe() zeroes the full capacity, read back from the same memory")
    func wipeInPlace() throws {
        let secret = try SecretBytes.testing([UInt8](repeating: 0xA5, count: 4096))
        #expect(secret.bytesForTesting.allSatisfy { $0 == 0xA5 })
        secret.wipe()
        let readBack = secret.withUnsafeBytes { Array($0) }
        #expect(readBack.count == 4096)
        #expect(readBack.allSatisfy { $0 == 0 })
    }

    @Test(
        "deinit zeroes the full capacity before it is freed: a pool slot, or a guarded allocation",
        arguments: [(333, 1024), (10_000, 10_000)])
    func wipeOnDeinit(size: Int, capacity: Int) throws {
        final class Seen: Sendable {
            let state = Mutex<(address: UInt, zero: Bool?)>((0, nil))
        }
        let seen = Seen()
        do {
            let secret = try SecretBytes.testing([UInt8](repeating: 0x5A, count: size))
            let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            seen.state.withLock { $0.address = address }
            SecretBytes.afterWipeForTesting.withLock { hook in
                hook = { buffer in
                    let here = UInt(bitPattern: buffer.baseAddress)
                    let allZero = buffer.allSatisfy { $0 == 0 } && buffer.count == capacity
                    seen.state.withLock { if $0.address == here { $0.zero = allZero } }
                }
            }
            withExtendedLifetime(secret) {}
        }
        SecretBytes.afterWipeForTesting.withLock { $0 = nil }
        #expect(seen.state.withLock { $0.zero } == true)
    }

    @Test("new secrets read as zeros over their whole slot, also where a released one was")
    func poolReuse() throws {
        var first: UInt = 0
        do {
            let secret = try SecretBytes.testing([UInt8](repeating: 0xEE, count: 200))
            first = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        }
        // The pool is shared with tests running in parallel: look for the slot among a few.
        let next = try (0..<64).map { _ in try SecretBytes(count: 200) }
        for secret in next {
            secret.withUnsafeBytes { buffer in
                let full = UnsafeRawBufferPointer(start: buffer.baseAddress, count: 256)
                #expect(full.allSatisfy { $0 == 0 })
            }
        }
        // (Usually one of them is the released slot: the free list is last in, first out.)
        #expect(first != 0)
    }

    @Test("the pool grows lazily: one page first, then chunks that double up to 256 KiB, each a whole number of slots")
    func poolGrowth() {
        let sizes = (0..<8).map { SecurePool.chunkSize(index: $0) }
        #expect(sizes == [4096, 8192, 16384, 32768, 65536, 131072, 262144, 262144])
        for size in sizes {
            #expect(SecurePool.slotSizes.allSatisfy { size % $0 == 0 })
        }
    }

    @Test("description and debugDescription are redacted")
    func redacted() throws {
        let secret = try SecretBytes.testing(Array("hunter2".utf8))
        #expect(secret.description == "SecretBytes(7 bytes, redacted)")
        #expect("\(secret)" == "SecretBytes(7 bytes, redacted)")
        #expect(String(reflecting: secret) == "SecretBytes(7 bytes, redacted)")
        #expect(!String(describing: secret).contains("hunter2"))
    }

    @Test("equality compares content and length")
    func equality() throws {
        #expect(try SecretBytes.testing([1, 2, 3]) == SecretBytes.testing([1, 2, 3]))
        #expect(try SecretBytes.testing([1, 2, 3]) != SecretBytes.testing([1, 2, 4]))
        #expect(try SecretBytes.testing([1, 2, 3]) != SecretBytes.testing([1, 2]))
        #expect(try SecretBytes(count: 0) == SecretBytes(count: 0))
    }

    @Test("init(consuming:) zeroes the source array")
    func consuming() throws {
        var source: [UInt8] = Array("derived-key-material".utf8)
        let secret = try SecretBytes(consuming: &source)
        #expect(source == [UInt8](repeating: 0, count: 20))
        #expect(secret.bytesForTesting == Array("derived-key-material".utf8))
    }

    @Test("a throwing initialiser wipes and rethrows")
    func throwingInit() throws {
        struct Boom: Error, Equatable {}
        #expect(throws: Boom()) {
            try SecretBytes(count: 8) { buffer in
                buffer.storeBytes(of: UInt64.max, as: UInt64.self)
                throw Boom()
            }
        }
    }

    @Test("slice and copy are independent storage")
    func sliceAndCopy() throws {
        let secret = try SecretBytes.testing([0, 1, 2, 3, 4, 5])
        let copy = try secret.copy()
        let slice = try secret.slice(2..<5)
        secret.wipe()
        #expect(copy.bytesForTesting == [0, 1, 2, 3, 4, 5])
        #expect(slice.bytesForTesting == [2, 3, 4])
    }

    @Test("storage is locked into RAM (mlock): VmLck grows with secret allocations")
    func locked() throws {
        func lockedKiB() -> Int {
            let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        let before = lockedKiB()
        let secrets = try (0..<16).map { _ in try SecretBytes(count: 64 * 1024) }
        let during = lockedKiB()
        #expect(before >= 0)
        #expect(during - before >= 16 * 64)
        withExtendedLifetime(secrets) {}
    }
}
