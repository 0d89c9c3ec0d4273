import ArcaSync
import Foundation
import Testing

@testable import ArcaDaemon

/// The bytes a torn-tail cut drops are kept for an operator (review of issue 17): in
/// `<uid>.journal.torn` beside the journal, 0600, at most 1 MiB, replaced by the next cut.
/// Before, the cut truncated the journal and the bytes were gone.
@Suite("arcad sync journal keeps the torn tail it cuts", .serialized)
struct SyncJournalTornCopyTests {
    typealias Pair = SyncJournalCompactionTests.Pair
    let uid: UInt32 = 60_232

    func append(_ bytes: [UInt8], to path: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(bytes))
        handle.closeFile()
    }

    func contents(_ path: String) -> [UInt8]? { FileManager.default.contents(atPath: path).map { Array($0) } }

    func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
    }

    @Test("a cut at replay keeps exactly the cut bytes in a .torn file 0600; the next cut replaces it")
    func cutAtReplayIsKept() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 3, size: 100)
        let store = pair.b.store
        #expect(store.tornPath == store.journalPath + ".torn")
        _ = try pair.restarted()
        #expect(contents(store.tornPath) == nil)  // nothing cut, nothing kept
        let whole = try #require(contents(store.journalPath))
        try append([1, 0, 0, 0x10, 0xAA, 0xBB], to: store.journalPath)
        _ = try pair.restarted()
        #expect(contents(store.journalPath) == whole)
        #expect(contents(store.tornPath) == [1, 0, 0, 0x10, 0xAA, 0xBB])
        #expect(mode(store.tornPath) == 0o600)
        try append([2, 0, 0], to: store.journalPath)
        _ = try pair.restarted()
        #expect(contents(store.tornPath) == [2, 0, 0])
        #expect(!FileManager.default.fileExists(atPath: store.tornPath + ".tmp"))
        try store.removeAll()
        #expect(contents(store.tornPath) == nil)
    }

    @Test("a torn tail past 1 MiB: its first 1 MiB is kept, no more")
    func copyIsBounded() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 1, size: 100)
        let store = pair.b.store
        let whole = try #require(contents(store.journalPath))
        // An entry announcing 2 MiB of which 1 MiB + 100 bytes arrived.
        let torn = [1, 0, 0x20, 0, 0] + (0..<(SyncStore.maximumTornCopyLength + 100)).map { UInt8($0 % 251) }
        try append(torn, to: store.journalPath)
        _ = try pair.restarted()
        #expect(SyncStore.maximumTornCopyLength == 1 << 20)
        #expect(contents(store.journalPath) == whole)
        #expect(contents(store.tornPath) == Array(torn.prefix(1 << 20)))
    }

    @Test("a compaction that drops a torn tail (an append cut short while arcad ran) keeps it too")
    func compactionKeepsTheTornTail() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 3, size: 100)
        let store = pair.b.store
        try append([6, 0, 0, 0, 9, 1, 2], to: store.journalPath)
        #expect(try store.read().torn)
        pair.b.compactJournal(reason: "test", force: true)
        #expect(try store.read().torn == false)
        #expect(contents(store.tornPath) == [6, 0, 0, 0, 9, 1, 2])
    }

    @Test("a copy that cannot be made (a directory at the .torn path) does not stop the cut, nor sync")
    func copyFailureStillCuts() throws {
        let pair = try Pair(uid: uid)
        defer { pair.cleanUp() }
        try pair.exchange(items: 3, size: 100)
        let store = pair.b.store
        // Something rename(2) cannot replace: a directory holding a file.
        try FileManager.default.createDirectory(atPath: store.tornPath + "/x", withIntermediateDirectories: true)
        let whole = try #require(contents(store.journalPath))
        try append([1, 0, 0, 0x10, 0xAA], to: store.journalPath)
        let replayed = try pair.restarted()
        #expect(contents(store.journalPath) == whole)
        #expect(replayed.replica.replayDigest == pair.b.replica.replayDigest)
        // Sync goes on: the restarted session journals more and replays it again.
        pair.b = replayed
        try pair.exchange(items: 2, size: 100)
        #expect(try pair.restarted().replica.replayDigest == pair.b.replica.replayDigest)
        // The compaction's copy fails the same way and compacts all the same.
        try append([6, 0, 0, 0, 9, 1], to: store.journalPath)
        pair.b.compactJournal(reason: "test", force: true)
        #expect(try store.read().torn == false)
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: store.tornPath, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}
