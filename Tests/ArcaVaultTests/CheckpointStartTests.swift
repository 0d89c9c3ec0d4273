import Foundation
import Synchronization
import Testing

@testable import ArcaVault

/// Review leftovers of the WAL checkpointer: a thread that failed to start is tried again
/// after a backoff (before, one failed `pthread_create` ended background checkpoints for
/// the vault's lifetime), and the checkpoint connection's file is compared with the file
/// the writer holds open, not with what the path named when the vault was opened.
@Suite(.serialized) struct CheckpointStartTests {
    struct Refused: Error {}

    /// A clock and a thread starter the test drives: the first `failures` starts fail.
    final class Seams: Sendable {
        let now = Mutex(0)
        let failures: Mutex<Int>
        let attempts = Mutex(0)

        init(failures: Int) { self.failures = Mutex(failures) }

        var clock: @Sendable () -> Int { { [self] in now.withLock { $0 } } }

        var start: @Sendable (Int, @escaping @Sendable () -> Void) throws -> Void {
            { [self] stackSize, body in
                attempts.withLock { $0 += 1 }
                let fail = failures.withLock { left -> Bool in
                    guard left > 0 else { return false }
                    left -= 1
                    return true
                }
                if fail { throw Refused() }
                try WALCheckpointer.startDetached(stackSize: stackSize, body)
            }
        }
    }

    /// Waits (up to 20 s) until `checkpointer` has run or skipped `count` checkpoints.
    private func waitFor(_ checkpointer: WALCheckpointer, _ count: Int) -> Bool {
        for _ in 0..<2000 {
            let s = checkpointer.statistics
            if s.checkpoints + s.skipped >= count { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func aFailedThreadStartIsTriedAgainAfterABackoffThatDoubles() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let writer = try Database(path: vault.path, create: false)
        let seams = Seams(failures: 2)
        let checkpointer = WALCheckpointer(
            path: vault.path, writer: writer, threshold: 10, startRetryMilliseconds: 1_000,
            startThread: seams.start, clock: seams.clock)
        defer { checkpointer.stop() }
        checkpointer.committed(frames: 10, writer: writer)
        #expect(seams.attempts.withLock { $0 } == 1)
        #expect(checkpointer.statistics.startFailures == 1)
        #expect(checkpointer.statistics.threadsStarted == 0)
        seams.now.withLock { $0 = 999 }
        checkpointer.committed(frames: 11, writer: writer)
        #expect(seams.attempts.withLock { $0 } == 1)  // inside the backoff: not tried
        seams.now.withLock { $0 = 1_000 }
        checkpointer.committed(frames: 12, writer: writer)
        #expect(seams.attempts.withLock { $0 } == 2)
        #expect(checkpointer.statistics.startFailures == 2)
        seams.now.withLock { $0 = 2_999 }  // the second failure doubled the wait: 2,000 ms from 1,000
        checkpointer.committed(frames: 13, writer: writer)
        #expect(seams.attempts.withLock { $0 } == 2)
        seams.now.withLock { $0 = 3_000 }
        checkpointer.committed(frames: 14, writer: writer)
        #expect(seams.attempts.withLock { $0 } == 3)
        #expect(waitFor(checkpointer, 1))
        #expect(checkpointer.statistics.checkpoints == 1)
        #expect(checkpointer.statistics.threadsStarted == 1)
        #expect(checkpointer.statistics.startFailures == 2)
    }

    @Test func theWritersOpenFileIsTheOneAtThePath() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let writer = try Database(path: vault.path, create: false)
        let fd = try #require(writer.mainFileDescriptor())
        #expect(FileProbe.identity(fd: fd) == FileProbe.identity(path: vault.path))
        #expect(FileProbe.identity(fd: fd) != nil)
    }

    /// The file at the path is replaced after the writer opened it and before the
    /// checkpointer is made (as between `Vault.open`'s open and its init). Before, the
    /// checkpointer took the path's identity then, so the copy passed the check and the
    /// writer's WAL (same `-wal` name) was checkpointed into a file that is not the vault.
    @Test func aFileSwappedInAfterTheWriterOpenedIsNeverCheckpointed() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let path = vault.path
        let writer = try Database(path: path, create: false)
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE swapped (x); INSERT INTO swapped VALUES (1)")
        let copy = path + ".copy"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        let before = try #require(FileManager.default.contents(atPath: path))
        let checkpointer = WALCheckpointer(path: path, writer: writer, threshold: 1)
        defer { checkpointer.stop() }
        checkpointer.committed(frames: 1, writer: writer)
        #expect(waitFor(checkpointer, 1))
        #expect(checkpointer.statistics.skipped == 1)
        #expect(checkpointer.statistics.checkpoints == 0)
        #expect(FileManager.default.contents(atPath: path) == before)
    }

    @Test func aFileSwappedInWhileTheVaultIsOpenIsNeverCheckpointed() throws {
        let dir = try TempDir()
        let (created, _) = try makeVault(dir)
        let path = created.path
        let vault = try Vault.open(at: path, checkpointPages: 10)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        let copy = path + ".copy"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(rename(copy, path) == 0)
        let before = try #require(FileManager.default.contents(atPath: path))
        var added = 0
        while vault.checkpointer.statistics.lastCommitFrames < 10 {
            try vault.add(.genericPassword, attributes: genp("swap", "item-\(added)"), secret: secret("s"))
            added += 1
        }
        #expect(waitFor(vault.checkpointer, 1))
        #expect(vault.checkpointer.statistics.skipped >= 1)
        #expect(vault.checkpointer.statistics.checkpoints == 0)
        #expect(FileManager.default.contents(atPath: path) == before)
    }
}
