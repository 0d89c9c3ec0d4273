import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

/// The WAL checkpointer (`WALCheckpointer`): the writer's commits no longer checkpoint,
/// a thread of the vault's own does, and a kill in the middle of one loses nothing.
@Suite(.serialized) struct CheckpointTests {
    /// A vault at `dir`/vault.db, reopened with `pages` as the checkpoint threshold.
    private func reopened(_ dir: TempDir, pages: Int) throws -> Vault {
        let (created, _) = try makeVault(dir)
        let path = created.path
        let vault = try Vault.open(at: path, checkpointPages: pages)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        return vault
    }

    private func add(_ vault: Vault, _ range: Range<Int>) throws {
        for i in range {
            try vault.add(.genericPassword, attributes: genp("wal", "item-\(i)"), secret: secret("secret-\(i)"))
        }
    }

    /// Adds items `first`, `first + 1`… until the WAL holds `frames`; returns the next number.
    private func addUntilTheWALHolds(_ frames: Int, _ vault: Vault, from first: Int) throws -> Int {
        var next = first
        while vault.checkpointer.statistics.lastCommitFrames < frames {
            try add(vault, next..<(next + 1))
            next += 1
        }
        return next
    }

    private func walSize(_ vault: Vault) -> Int { FileProbe.header(path: vault.path + "-wal")?.size ?? 0 }

    /// Waits (up to 20 s) until the thread has run `count` checkpoints.
    private func waitForCheckpoints(_ vault: Vault, _ count: Int) -> Bool {
        for _ in 0..<2000 {
            if vault.checkpointer.statistics.checkpoints >= count { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func theWriterNoLongerCheckpointsOnItsOwnCommits() throws {
        let dir = try TempDir()
        // Neither the thread nor the inline fallback is reached.
        let vault = try reopened(dir, pages: 1 << 40)
        try add(vault, 0..<150)
        // SQLite's auto-checkpoint (1,000 frames) would have restarted the WAL: it would
        // hold at most 1,000 frames plus one commit's. Every commit's frames are still there.
        let frames = vault.checkpointer.statistics.lastCommitFrames
        #expect(frames > 1100, "\(frames) frames")
        #expect(walSize(vault) == 32 + frames * (24 + 4096))
        #expect(vault.checkpointer.statistics.checkpoints == 0)
    }

    @Test func theThreadCheckpointsPastTheThresholdAndTheWALRestarts() throws {
        let dir = try TempDir()
        let vault = try reopened(dir, pages: 50)
        let added = try addUntilTheWALHolds(50, vault, from: 0)
        #expect(waitForCheckpoints(vault, 1))
        let last = try #require(vault.checkpointer.statistics.last)
        // No reader held the WAL: the whole of it went into the file.
        #expect(last.walFrames >= 50)
        #expect(last.checkpointed == last.walFrames)
        // The next write starts the WAL over.
        try add(vault, added..<(added + 1))
        #expect(vault.checkpointer.statistics.lastCommitFrames < 50)
        #expect(try vault.itemCount() == added + 1)
    }

    @Test func commitsThatCameInDuringAPassAreCopiedByTheNextCommitAndTheWALRestarts() throws {
        let dir = try TempDir()
        let vault = try reopened(dir, pages: 50)
        try add(vault, 0..<1)
        // A reader's snapshot stands for the commits that land while a pass copies: the pass
        // copies the frames up to it and ends with the rest still in the WAL.
        let reader = try Database(path: vault.path, create: false)
        try reader.execute("BEGIN")
        let s = try reader.statement("SELECT count(*) FROM items")
        #expect(try s.step())
        let added = try addUntilTheWALHolds(50, vault, from: 1)
        #expect(waitForCheckpoints(vault, 1))
        let pass = try #require(vault.checkpointer.statistics.last)
        #expect(pass.checkpointed < pass.walFrames)
        s.finish()
        try reader.execute("COMMIT")
        // The next commit copies the rest itself, at once (before, it asked the thread for
        // another pass, which the following commits outran: the WAL grew to 8x the threshold).
        try add(vault, added..<(added + 1))
        #expect(vault.checkpointer.statistics.finishes == 1)
        #expect(vault.checkpointer.statistics.checkpoints == 1)
        // And the one after starts the WAL over.
        try add(vault, (added + 1)..<(added + 2))
        #expect(vault.checkpointer.statistics.lastCommitFrames < 50)
        #expect(try vault.itemCount() == added + 2)
    }

    @Test func aWALTheThreadDoesNotEmptyStaysBoundedByTheWritersFallback() throws {
        let dir = try TempDir()
        let vault = try reopened(dir, pages: 20)
        // A reader pins the WAL: no checkpoint can complete, the WAL grows past 8x the
        // threshold, where the writer's own PASSIVE checkpoint (which cannot finish
        // either) is tried on every commit. Nothing fails.
        let reader = try Database(path: vault.path, create: false)
        try reader.execute("BEGIN")
        let s = try reader.statement("SELECT count(*) FROM items")
        #expect(try s.step())
        try add(vault, 0..<40)
        try reader.execute("COMMIT")
        s.finish()
        #expect(vault.checkpointer.statistics.lastCommitFrames > vault.checkpointer.inlineThreshold)
        // Once the reader is gone, a commit's checkpoint (the writer's, or the thread's if it
        // was running) empties the WAL, and a later write starts it over.
        var added = 40
        while vault.checkpointer.statistics.lastCommitFrames >= vault.checkpointer.inlineThreshold, added < 100 {
            try add(vault, added..<(added + 1))
            added += 1
        }
        #expect(added < 100)
        #expect(try vault.itemCount() == added)
    }

    @Test func closingTheVaultEndsTheThreadAndRemovesTheWAL() throws {
        let dir = try TempDir()
        var vault: Vault? = try reopened(dir, pages: 10)
        let path = try #require(vault?.path)
        if let v = vault { try add(v, 0..<10) }
        #expect(vault.map { waitForCheckpoints($0, 1) } == true)
        #expect(FileProbe.exists(path: path + "-wal"))
        vault = nil
        // Both connections closed: the last one checkpointed and removed the WAL.
        #expect(!FileProbe.exists(path: path + "-wal"))
        let again = try Vault.open(at: path)
        try again.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        #expect(try again.itemCount() == 10)
    }

    @Test func killedInTheMiddleOfCheckpointsLosesNoAcknowledgedItem() throws {
        let dir = try TempDir()
        let (created, _) = try makeVault(dir)
        let path = created.path
        var acknowledged: [Int] = []
        var generator = SystemRandomNumberGenerator()
        for run in 0..<30 {
            // A checkpoint past every 4 frames: the thread is nearly always in one.
            let ids = try runChild(
                ["add", path, password, String(run * 1_000_000), "0", "4"],
                killAfter: Double.random(in: 0.02...0.25, using: &generator))
            acknowledged += ids.compactMap(Int.init)
            let vault = try Vault.open(at: path)
            let check = try vault.db.statement("PRAGMA integrity_check")
            #expect(try check.step())
            #expect(check.text(0) == "ok", "run \(run)")
            check.finish()
            let missing = try missingItems(acknowledged, in: vault)
            #expect(missing.isEmpty, "run \(run): acknowledged but missing \(missing.prefix(5))")
            if !missing.isEmpty { break }
        }
        #expect(acknowledged.count > 30)
    }
}
