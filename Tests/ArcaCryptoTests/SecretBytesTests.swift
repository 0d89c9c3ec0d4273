import Synchronization
import Testing

@testable import ArcaCrypto

#if canImport(Glibc)
    import Glibc
#endif

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

    @Test("new secrets read as zeros over their whole slot, also the released slot, which comes back")
    func poolReuse() throws {
        var first: UInt = 0
        do {
            // 1,000 bytes: a class (1 KiB) few other tests use, so the slot is rarely taken between.
            let secret = try SecretBytes.testing([UInt8](repeating: 0xEE, count: 1000))
            first = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        }
        // The free list is last in, first out; tests running in parallel may take a slot or
        // two of the class in between, so look for it among a few. (SecurePoolTests holds
        // the exact order, on a pool state of its own.)
        let next = try (0..<64).map { _ in try SecretBytes(count: 1000) }
        let addresses = next.map { secret in secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(addresses.contains(first))
        for secret in next {
            secret.withUnsafeBytes { buffer in
                let full = UnsafeRawBufferPointer(start: buffer.baseAddress, count: 1024)
                #expect(full.allSatisfy { $0 == 0 })
            }
        }
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

    /// A /proc file read to its end (its size reads as 0, so read until EOF).
    static func procFile(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if got == 0 { break }
            bytes += chunk[..<got]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("a pooled secret (4 KiB) is locked into RAM and out of core dumps: its mapping's VmFlags hold lo and dd")
    func pooledLocked() throws {
        let secret = try SecretBytes(count: 4096)
        let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let smaps = Self.procFile("/proc/self/smaps")
        var inMapping = false
        var flags: [Substring] = []
        for line in smaps.split(separator: "\n") {
            // A mapping starts with "start-end perms ..."; its fields follow, VmFlags last.
            if let range = line.split(separator: " ").first, range.contains("-"),
                let dash = range.firstIndex(of: "-"),
                let start = UInt(range[..<dash], radix: 16),
                let end = UInt(range[range.index(after: dash)...], radix: 16)
            {
                inMapping = start <= address && address < end
            } else if inMapping, line.hasPrefix("VmFlags:") {
                flags = line.split(separator: " ").dropFirst().map { $0 }
            }
        }
        // lo: mlock; dd: MADV_DONTDUMP.
        #expect(flags.contains("lo"), "mapping of \(String(address, radix: 16)) in \(smaps.utf8.count) bytes of smaps")
        #expect(flags.contains("dd"))
        let status = Self.procFile("/proc/self/status")
        let vmLck = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") }?.split(separator: " ")
        #expect((vmLck.flatMap { Int($0[1]) } ?? 0) >= 4)
        withExtendedLifetime(secret) {}
    }
}
