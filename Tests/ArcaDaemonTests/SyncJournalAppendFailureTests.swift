import Foundation
import Testing

@testable import ArcaDaemon

/// An append the disk cuts short (review of issue 17): the journal goes back to its last whole
/// entry. Before, the torn bytes stayed, the next good append landed after them, and the next
/// replay cut that good entry away with the torn one. The short write is a real one: the state
/// directory is a 64 KiB tmpfs (root), filled to a few bytes short of the entry.
@Suite("arcad sync journal: a failed append leaves no torn bytes", .serialized)
struct SyncJournalAppendFailureTests {
    @Test("a write cut short by a full disk is cut back; the next append is whole and replays")
    func shortWriteIsCutBack() throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent(
            "harden-append-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let mounted = Process()
        mounted.executableURL = URL(fileURLWithPath: "/bin/mount")
        mounted.arguments = ["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mountPoint]
        try mounted.run()
        mounted.waitUntilExit()
        try #require(mounted.terminationStatus == 0, "mount tmpfs (needs root)")
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [mountPoint]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        try StateDirectory.prepare(mountPoint)
        let store = SyncStore(stateDirectory: mountPoint, uid: 60_251)
        try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true)
        let first = SyncEntry.record([UInt8](repeating: 1, count: 100))
        try store.append([first])
        let whole = try #require(FileManager.default.contents(atPath: store.journalPath))
        // Fill the rest of the file system, leaving room for part of a 16 KiB entry only.
        let filler = mountPoint + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try #require(FileHandle(forWritingAtPath: filler))
        let page = Data(repeating: 0, count: 4096)
        var free = 64 << 10
        while free > 8192 {
            handle.write(page)
            free = Int(
                (try FileManager.default.attributesOfFileSystem(forPath: mountPoint))[.systemFreeSize] as? Int64 ?? 0)
        }
        handle.closeFile()
        let big = SyncEntry.record([UInt8](repeating: 2, count: 16 << 10))
        #expect(throws: HandlerError.self) { try store.append([big]) }
        // Cut back to the last whole entry: nothing torn left.
        #expect(FileManager.default.contents(atPath: store.journalPath).map { Data($0) } == whole)
        try FileManager.default.removeItem(atPath: filler)
        let second = SyncEntry.record([UInt8](repeating: 3, count: 100))
        try store.append([second])
        let journal = try store.read()
        #expect(journal.torn == false)
        #expect(journal.entries == [first, second])
    }
}
