import Testing

@testable import ArcaKeyring

/// Reading root's quota before each ring and key arcad adds must not make the kernel
/// format `/proc/key-users` for every uid on the machine.
@Suite("Root's kernel-key quota, read from the first line only")
struct KeyQuotaReadTests {
    @Test("a limited read of /proc/key-users asks for no more than the limit")
    func limitedRead() throws {
        // Before: the first read asked for a whole page, and a second one followed.
        let head = try #require(ProcFile.read("/proc/key-users", limit: KeyQuota.rootLineLimit))
        #expect(head.utf8.count <= KeyQuota.rootLineLimit)
        #expect(head.utf8.count > 0)
        let tiny = try #require(ProcFile.read("/proc/key-users", limit: 7))
        #expect(tiny.utf8.count == 7)
    }

    @Test("root's line from the short read is the one the whole file lists for uid 0")
    func rootMatchesWholeFile() throws {
        let root = try KeyQuota.root()
        let whole = try #require(try KeyQuota.current(uid: 0))
        #expect(root.uid == 0)
        // Usage moves with every root process's keys; the limits do not.
        #expect(root.maximumKeys == whole.maximumKeys)
        #expect(root.maximumBytes == whole.maximumBytes)
    }
}
