import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

/// The checkpoint thread holds nothing while idle: it opens its connection for each
/// checkpoint and closes it, and ends after its idle period; a checkpoint by a path that
/// no longer names the vault's file is skipped. Waits out idle periods, so it runs alone
/// (a `TimingTests` suite).
@Suite(.serialized) struct CheckpointThreadTimingTests {
    /// This process's threads (`/proc/self/task`).
    private func threads() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count
    }

    /// Whether the checkpointer's last thread still exists.
    private func threadExists(_ vault: Vault) throws -> Bool {
        let id = try #require(vault.checkpointer.statistics.threadID)
        return FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
    }

    /// This process's fds open on the vault's files (the database, its WAL and shared memory).
    private func fds(on path: String) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { fd in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? ""
            return target == path || target == path + "-wal" || target == path + "-shm"
        }.count
    }

    private func opened(_ dir: TempDir, pages: Int, idle: Int) throws -> Vault {
        let (created, _) = try makeVault(dir)
        let vault = try Vault.open(at: created.path, checkpointPages: pages, checkpointIdleMilliseconds: idle)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        return vault
    }

    /// Adds items until a commit crosses the threshold (one checkpoint request).
    private func addPastThreshold(_ vault: Vault, from: Int) throws -> Int {
        var added = from
        repeat {
            try vault.add(.genericPassword, attributes: genp("idle", "item-\(added)"), secret: secret("s\(added)"))
            added += 1
        } while vault.checkpointer.statistics.lastCommitFrames < vault.checkpointer.threshold
        return added
    }

    /// Polls (up to 20 s) until `condition` holds.
    private func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<2000 {
            if try condition() { return true }
            usleep(10_000)
        }
        return false
    }

    @Test func afterItsIdlePeriodTheThreadIsGoneAndTheVaultHoldsOnlyItsOwnFds() throws {
        let dir = try TempDir()
        let vault = try opened(dir, pages: 30, idle: 200)
        // The vault's own connection (database, WAL, shared memory) before any checkpoint.
        try vault.add(.genericPassword, attributes: genp("idle", "first"), secret: secret("s"))
        let ownFds = try fds(on: vault.path)
        let ownThreads = try threads()
        // The database, WAL and shared memory (4: SQLite may keep the database fd of a
        // connection closed earlier in this process open until its file's locks are released).
        #expect((3...4).contains(ownFds), "\(ownFds)")
        var added = try addPastThreshold(vault, from: 0)
        #expect(try eventually { vault.checkpointer.statistics.checkpoints >= 1 })
        #expect(try eventually { !vault.checkpointer.statistics.running })
        // The thread ended (its task is gone) and its connection was closed.
        #expect(try eventually { try !threadExists(vault) })
        #expect(try eventually { try threads() == ownThreads })
        #expect(try fds(on: vault.path) == ownFds)
        // The next request starts a new thread, which checkpoints and ends again.
        added = try addPastThreshold(vault, from: added)
        #expect(try eventually { vault.checkpointer.statistics.checkpoints >= 2 })
        #expect(vault.checkpointer.statistics.threadsStarted == 2)
        #expect(try eventually { try !threadExists(vault) })
        #expect(try eventually { try threads() == ownThreads })
        #expect(try fds(on: vault.path) == ownFds)
        #expect(vault.checkpointer.statistics.skipped == 0)
        #expect(try vault.itemCount() == added + 1)
    }

    @Test func aCheckpointByAPathThatNamesAnotherFileIsSkipped() throws {
        let dir = try TempDir()
        let vault = try opened(dir, pages: 30, idle: 200)
        let path = vault.path
        // Another vault put in its place (the open vault's file is now unlinked); closed
        // first, so that its file holds all of it.
        let other = try TempDir()
        let replacementPath = try makeVault(other).0.path
        let before = try Data(contentsOf: URL(fileURLWithPath: replacementPath))
        #expect(rename(replacementPath, path) == 0)
        let added = try addPastThreshold(vault, from: 0)
        #expect(try eventually { vault.checkpointer.statistics.skipped >= 1 })
        #expect(vault.checkpointer.statistics.checkpoints == 0)
        // The file at the path is untouched; the vault still has every item.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try vault.itemCount() == added)
    }
}
