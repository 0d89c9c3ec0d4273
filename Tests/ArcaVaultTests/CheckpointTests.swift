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

    /// The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts over.
    private func walRestarts(_ vault: Vault) throws -> Int {
        let handle = try #require(FileHandle(forReadingAtPath: vault.path + "-wal"))
        defer { try? handle.close() }
        let header = [UInt8](handle.readData(ofLength: 16))
        try #require(header.count == 16)
        return header[12..<16].reduce(0) { $0 << 8 | Int($1) }
    }

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

    @Test func aPassAReaderHeldBackIsFollowedByAnotherPassNotByTheWriter() throws {
        let dir = try TempDir()
        let vault = try reopened(dir, pages: 50)
        try add(vault, 0..<1)
        // A reader's snapshot holds the pass back: it copies the frames up to it and ends
        // with the rest still in the WAL.
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
        // What is left may be the whole WAL: the next commit asks the thread, it does not copy it.
        try expectAnotherPassAndARestart(vault, from: added)
        #expect(try vault.itemCount() == added + 2)
    }

    @Test func aFewCommitsDuringACompletePassAreCopiedByTheNextCommitAndTheWALRestarts() throws {
        let dir = try TempDir()
        let (vault, next, _) = try firstPass(dir, pages: 200, addsAfterTheCheckpoint: 3, keepingTheWAL: true)
        let pass = try #require(vault.checkpointer.statistics.last)
        #expect(pass.checkpointed == pass.walFrames)
        #expect(vault.checkpointer.statistics.lastCommitFrames - pass.walFrames <= 50 - 12)
        let restarts = try walRestarts(vault)
        // The next commit copies the three adds and its own itself: one pass, one finish.
        try add(vault, next..<(next + 1))
        #expect(vault.checkpointer.statistics.finishes == 1)
        // And the one after starts the WAL over.
        try add(vault, (next + 1)..<(next + 2))
        #expect(try walRestarts(vault) == restarts + 1)
        // The adds during the pass asked for no other pass (the commits past the threshold
        // while one runs would have: it was done, the next one copies them).
        usleep(100_000)
        #expect(vault.checkpointer.statistics.checkpoints == 1)
        #expect(vault.checkpointer.statistics.finishes == 1)
        #expect(try vault.itemCount() == next + 2 + 3, "the three adds during the pass")
    }

    @Test func moreCommitsDuringAPassThanACommitMayCopyGoToAnotherPass() throws {
        let dir = try TempDir()
        let (vault, next, _) = try firstPass(dir, pages: 200, addsAfterTheCheckpoint: 30, keepingTheWAL: true)
        let pass = try #require(vault.checkpointer.statistics.last)
        #expect(pass.checkpointed == pass.walFrames)
        #expect(vault.checkpointer.statistics.lastCommitFrames - pass.walFrames > 50)
        try expectAnotherPassAndARestart(vault, from: next)
        #expect(try vault.itemCount() == next + 2 + 30, "the 30 adds during the pass")
    }

    @Test func aWALThatStartedOverBeforeThePassEndedIsNotCopiedByTheWriter() throws {
        let dir = try TempDir()
        // The pass copies all; before it has ended, the add after its checkpoint starts the WAL
        // over and more fill the new one past the threshold (a slow thread, a busy writer).
        let (vault, next, during) = try firstPass(
            dir, pages: 200, addsAfterTheCheckpoint: 1, keepingTheWAL: false, refillingTheWAL: true)
        // The WAL held 200 frames or more at the pass: it took more adds to refill, so the
        // first one started it over.
        #expect(during > 1)
        #expect(vault.checkpointer.statistics.lastCommitFrames >= 200)
        // The next commit asks the thread: it does not copy the whole new WAL as though it
        // were the rest of the pass that ended.
        try expectAnotherPassAndARestart(vault, from: next)
        #expect(try vault.itemCount() == next + 2 + during, "the adds during the pass")
    }

    @Test func aFailedPassIsFollowedByAnotherPassNotByTheWriter() throws {
        let dir = try TempDir()
        let vault = try reopened(dir, pages: 50)
        let script = PassScript()
        // The first pass fails after its open, as a failed open or PRAGMA would.
        vault.checkpointer.setPassHook { point in
            guard point == .opened, script.passes == 0 else { return }
            script.passes += 1
            throw SQLiteError(code: 1, message: "injected")
        }
        let added = try addUntilTheWALHolds(50, vault, from: 0)
        #expect(waitForCheckpoints(vault, 1))
        #expect(vault.checkpointer.statistics.last == nil)
        try expectAnotherPassAndARestart(vault, from: added)
        #expect(try vault.itemCount() == added + 2)
    }

    /// Adds items `first` and `first + 1`: the first commit asks the thread for a second pass
    /// (it copies nothing itself), which copies the whole WAL; the second starts the WAL over.
    private func expectAnotherPassAndARestart(_ vault: Vault, from first: Int) throws {
        let restarts = try walRestarts(vault)
        try add(vault, first..<(first + 1))
        #expect(waitForCheckpoints(vault, 2))
        #expect(vault.checkpointer.statistics.finishes == 0)
        let pass = try #require(vault.checkpointer.statistics.last)
        #expect(pass.checkpointed == pass.walFrames)
        try add(vault, (first + 1)..<(first + 2))
        #expect(try walRestarts(vault) == restarts + 1)
    }

    /// What a test's pass hook does, and counts (the thread calls it).
    private final class PassScript: @unchecked Sendable {
        var passes = 0
        var added = 0
        weak var vault: Vault?
        var reader: Database?
        var statement: Statement?
        var failure: String?
    }

    /// A vault whose first pass runs `adds` adds after its checkpoint, before it ends; with
    /// `keepingTheWAL`, a reader whose snapshot is the WAL's end (it holds nothing back)
    /// keeps them from starting the WAL over, as if they had landed while the pass copied.
    /// Returns when that pass ended, with the next item's number.
    /// With `refillingTheWAL`, adds on until the WAL holds `pages` frames again.
    private func firstPass(
        _ dir: TempDir, pages: Int, addsAfterTheCheckpoint adds: Int, keepingTheWAL: Bool,
        refillingTheWAL: Bool = false
    ) throws -> (Vault, Int, Int) {
        let vault = try reopened(dir, pages: pages)
        let script = PassScript()
        script.vault = vault
        vault.checkpointer.setPassHook { [add] point in
            guard script.passes == 0, let vault = script.vault else { return }
            do {
                switch point {
                case .opened:
                    guard keepingTheWAL else { return }
                    let reader = try Database(path: vault.path, create: false)
                    try reader.execute("BEGIN")
                    let s = try reader.statement("SELECT count(*) FROM items")
                    _ = try s.step()
                    (script.reader, script.statement) = (reader, s)
                case .checkpointed:
                    script.passes += 1
                    try add(vault, 1_000_000..<(1_000_000 + adds))
                    script.added = adds
                    while refillingTheWAL, vault.checkpointer.statistics.lastCommitFrames < pages {
                        try add(vault, (1_000_000 + script.added)..<(1_000_000 + script.added + 1))
                        script.added += 1
                    }
                    script.statement?.finish()
                    try script.reader?.execute("COMMIT")
                    (script.reader, script.statement) = (nil, nil)
                }
            } catch {
                script.failure = "\(error)"
            }
        }
        let next = try addUntilTheWALHolds(pages, vault, from: 0)
        #expect(waitForCheckpoints(vault, 1))
        #expect(script.failure == nil)
        #expect(script.passes == 1)
        #expect(try vault.itemCount() == next + script.added)
        return (vault, next, script.added)
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
