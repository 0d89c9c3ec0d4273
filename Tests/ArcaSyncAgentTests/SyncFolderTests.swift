import Foundation
import Testing

@testable import ArcaSyncAgent

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SyncFolderTests {
    static let deviceA = String(repeating: "ab", count: 32)
    static let deviceB = String(repeating: "0f", count: 32)

    /// A fresh `…/sync` path under a new temporary directory, removed when `body` returns.
    func withTemporaryRoot(_ body: (String) throws -> Void) throws {
        let root = temporaryRoot()
        defer { try? FileManager.default.removeItem(atPath: String(root.dropLast(5))) }
        try body(root)
    }

    func temporaryRoot() -> String {
        var template = Array("/tmp/arca-syncfolder.XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        #expect(made != nil)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/sync"
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(lstat(path, &info) == 0)
        return info.st_mode & 0o7777
    }

    @Test func recordNamesSortAsNumbers() {
        #expect(SyncFolder.recordName(7) == "00000000000000000007.rec")
        #expect(SyncFolder.recordName(UInt64.max) == "18446744073709551615.rec")
        #expect(SyncFolder.recordSeq("00000000000000000007.rec") == 7)
        for bad in [
            "7.rec", "0000000000000000000x.rec", "00000000000000000007.tmp", "+0000000000000000007.rec",
            "99999999999999999999.rec",
        ] {
            #expect(SyncFolder.recordSeq(bad) == nil, "\(bad)")
        }
    }

    @Test func deviceNamesAreLowercaseHex() {
        #expect(SyncFolder.isDeviceName(Self.deviceA))
        #expect(!SyncFolder.isDeviceName(Self.deviceA.uppercased()))
        #expect(!SyncFolder.isDeviceName(String(Self.deviceA.dropLast())))
        #expect(!SyncFolder.isDeviceName(".stfolder"))
    }

    @Test func writesAtomicallyWithPrivateModesAndListsInOrder() throws {
        try withTemporaryRoot { root in try writesAtomically(SyncFolder(root: root)) }
    }

    func writesAtomically(_ folder: SyncFolder) throws {
        try folder.create()
        for seq: UInt64 in [10, 2, 1] {
            try folder.writeRecord([UInt8(seq)], device: Self.deviceA, seq: seq)
        }
        try folder.write([9, 9], device: Self.deviceA, "head")
        try folder.write([1], device: Self.deviceA, "approvals", Self.deviceB)
        #expect(folder.recordSeqs(Self.deviceA) == [1, 2, 10])
        #expect(folder.read(Self.deviceA, "records", SyncFolder.recordName(10)) == [10])
        #expect(folder.read(Self.deviceA, "head") == [9, 9])
        #expect(folder.approvals(Self.deviceA) == [Self.deviceB])
        #expect(folder.devices() == [Self.deviceA])
        #expect(mode(folder.root) == 0o700)
        #expect(mode(folder.path(Self.deviceA)) == 0o700)
        #expect(mode(folder.path(Self.deviceA, "records")) == 0o700)
        #expect(mode(folder.path(Self.deviceA, "head")) == 0o600)
        // No temporary file is left behind for Syncthing to pick up.
        #expect(FolderIO.list(folder.path(Self.deviceA)).sorted() == ["approvals", "head", "records"])
        // Rewriting replaces the content whole.
        try folder.write([7], device: Self.deviceA, "head")
        #expect(folder.read(Self.deviceA, "head") == [7])
    }

    @Test func readsFollowNoSymlinkAndSkipStrayNames() throws {
        try withTemporaryRoot { root in try readsFollowNoSymlink(SyncFolder(root: root)) }
    }

    func readsFollowNoSymlink(_ folder: SyncFolder) throws {
        try folder.create()
        try folder.write([1], device: Self.deviceB, "head")
        #expect(symlink("/etc/passwd", folder.path(Self.deviceA)) == 0)
        #expect(mkdir(folder.root + "/.stfolder", 0o700) == 0)
        #expect(symlink("/etc/passwd", folder.path(Self.deviceB, "head2")) == 0)
        #expect(folder.read(Self.deviceB, "head2") == nil)
        #expect(folder.read(Self.deviceA, "head") == nil)
        #expect(folder.devices().contains(Self.deviceB))
    }

    /// `FolderIO.read` takes a regular file of at most `limit` bytes, and nothing else.
    @Test func readsOnlyRegularFilesWithinTheLimit() throws {
        try withTemporaryRoot { root in
            #expect(mkdir(root, 0o700) == 0)
            try FolderIO.writeAtomically(root + "/four", temporary: root + "/.tmp", [1, 2, 3, 4])
            #expect(FolderIO.read(root + "/four", limit: 4) == [1, 2, 3, 4])
            #expect(FolderIO.read(root + "/four", limit: 3) == nil)
            #expect(mkdir(root + "/directory", 0o700) == 0)
            #expect(FolderIO.read(root + "/directory", limit: 4) == nil)
            #expect(FolderIO.read(root + "/missing", limit: 4) == nil)
        }
    }
}
