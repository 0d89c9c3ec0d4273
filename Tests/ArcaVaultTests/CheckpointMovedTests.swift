import Foundation
import Synchronization
import Testing

@testable import ArcaVault

/// The checkpoint connection writes only into the vault's own file: the file it opened must
/// be the one at the path (`SQLITE_FCNTL_HAS_MOVED`), and that the vault's.
extension CheckpointTests {
    @Test func hasMovedTellsAConnectionWhoseFileWasReplaced() throws {
        let dir = try TempDir()
        let db = try Database(path: dir.path + "/a.db", create: true)
        try db.execute("CREATE TABLE t (x)")
        #expect(try db.hasMoved() == false)
        let other = try Database(path: dir.path + "/b.db", create: true)
        try other.execute("CREATE TABLE t (x)")
        #expect(rename(dir.path + "/b.db", dir.path + "/a.db") == 0)
        #expect(try db.hasMoved() == true)
    }

    @Test func aCheckpointWhoseConnectionOpenedAnotherFileIsSkippedAndWritesNothingThere() throws {
        let dir = try TempDir()
        let path = try makeVault(dir).0.path
        let vault = try Vault.open(at: path, checkpointPages: 30)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        // Another vault (closed: all of it in its file) takes the path; the thread opens it;
        // then the vault's file is back at the path: only the open file tells them apart.
        let other = try TempDir()
        let otherPath = try makeVault(other).0.path
        let kept = other.path + "/kept.db"
        #expect(link(otherPath, kept) == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: kept))
        let aside = dir.path + "/aside.db"
        #expect(rename(path, aside) == 0)
        #expect(rename(otherPath, path) == 0)
        let swapped = Mutex(false)
        vault.checkpointer.setPassHook { point in
            guard point == .opened, !swapped.withLock({ $0 }) else { return }
            swapped.withLock { $0 = true }
            #expect(rename(aside, path) == 0)
        }
        var added = 0
        while vault.checkpointer.statistics.lastCommitFrames < vault.checkpointer.threshold {
            try vault.add(.genericPassword, attributes: genp("moved", "item-\(added)"), secret: secret("s\(added)"))
            added += 1
        }
        #expect(eventually { vault.checkpointer.statistics.skipped == 1 })
        #expect(swapped.withLock { $0 })
        #expect(vault.checkpointer.statistics.checkpoints == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == before)
        #expect(try vault.itemCount() == added)
    }
}
