import ArcaCrypto
import Testing

@testable import ArcaVault

/// `Vault.reading`: the queries of one request read one snapshot, in one transaction.
@Suite struct ReadingTests {
    /// Every generic password of the vault.
    static let all = Query(.genericPassword, matchLimit: .all, returnAttributes: true)

    @Test func queriesInsideReadingSeeOneSnapshot() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        // Another connection to the same file, which writes between the two queries.
        let other = try Vault.open(at: vault.path)
        _ = try other.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        let counts = try vault.reading { () throws -> (Int, Int, Bool) in
            let before = try vault.copyMatching(Self.all).count
            try other.add(.genericPassword, attributes: genp("mail", "b"), secret: secret("two"))
            let after = try vault.copyMatching(Self.all).count
            return (before, after, vault.db.isInTransaction)
        }
        // Without the transaction the second query would see the other connection's item.
        #expect(counts.0 == 1)
        #expect(counts.1 == 1)
        #expect(counts.2)
        #expect(!vault.db.isInTransaction)
        #expect(try vault.copyMatching(Self.all).count == 2)
    }

    @Test func readingInsideATransactionRunsInIt() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let seen = try vault.db.transaction { () throws -> Int in
            try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
            return try vault.reading { try vault.copyMatching(Self.all).count }
        }
        #expect(seen == 1)
        #expect(!vault.db.isInTransaction)
    }

    @Test func anErrorInsideReadingEndsTheTransaction() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        #expect(vaultError { _ = try vault.reading { try vault.copyMatching(Self.all) } } == .itemNotFound)
        #expect(!vault.db.isInTransaction)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        #expect(try vault.copyMatching(Self.all).count == 1)
    }

    /// `reading` keeps the connection's cached statements: it used to set SQLite's `query_only`
    /// on and off around the body, and a flag pragma expires every prepared statement, so each
    /// one the next query (or login's collect) used was prepared again.
    @Test func readingPreparesNothingAgain() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        // Once, so that every statement of a read is cached (and BEGIN/COMMIT with them).
        #expect(try vault.reading { try vault.copyMatching(Self.all).count } == 1)
        let before = vault.db.reprepares
        for _ in 0..<5 {
            #expect(try vault.reading { try vault.copyMatching(Self.all).count } == 1)
            #expect(try vault.copyMatching(Self.all).count == 1)
        }
        #expect(vault.db.reprepares == before)
        #expect(before == 0)
    }

    /// What a write inside `reading` gets: one error, whichever way the write reaches SQLite.
    static func refused(_ vault: Vault) -> VaultError {
        .storage(path: vault.path, reason: "a write inside a read transaction")
    }

    /// `reading` promises its body does not write; before it was enforced, a write that takes no
    /// transaction of its own (the collection label, a recovery key) upgraded the read
    /// transaction and was committed with it.
    @Test func aWriteInsideReadingFailsAndChangesNothing() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        let before = try vault.copyMatching(Self.all).map(\.attributes)
        let writes: [(String, () throws -> Void)] = [
            ("label", { try vault.setCollectionLabel("Stolen") }),
            ("recovery key", { _ = try vault.enrollRecoveryKey(password: secret(password)) }),
            ("add", { try vault.add(.genericPassword, attributes: genp("mail", "b"), secret: secret("two")) }),
            ("update", { _ = try vault.update(Self.all, changes: genp("web", "a")) }),
            ("delete", { _ = try vault.delete(Self.all) }),
        ]
        for (name, write) in writes {
            let error = vaultError {
                _ = try vault.reading { () throws -> Int in
                    let count = try vault.copyMatching(Self.all).count
                    try write()
                    return count
                }
            }
            #expect(error == Self.refused(vault), "\(name)")
            #expect(!vault.db.isInTransaction, "\(name)")
        }
        #expect(try vault.collectionLabel() == Vault.defaultCollectionLabel)
        #expect(!vault.hasRecoveryKey)
        #expect(try vault.copyMatching(Self.all).map(\.attributes) == before)
        // The vault still writes outside.
        try vault.setCollectionLabel("Mine")
        #expect(try vault.collectionLabel() == "Mine")
    }

    /// Raw SQL run inside `read` (`Database.execute`, which nothing checks) is refused as a write,
    /// and the read transaction around it commits nothing.
    @Test func executeInsideReadIsRefused() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        let error = #expect(throws: SQLiteError.self) {
            try vault.db.read { try vault.db.execute("DELETE FROM items") }
        }
        #expect(error == Database.writeInsideRead)
        #expect(!vault.db.isInTransaction)
        #expect(try vault.copyMatching(Self.all).count == 1)
    }

    /// A write the body catches is still refused, and the body's reads still commit cleanly.
    @Test func aCaughtWriteInsideReadingLeavesTheReadsIntact() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
        let (count, error) = try vault.reading { () throws -> (Int, VaultError?) in
            let error = vaultError { try vault.setCollectionLabel("Stolen") }
            return (try vault.copyMatching(Self.all).count, error)
        }
        #expect(count == 1)
        #expect(error == Self.refused(vault))
        #expect(try vault.collectionLabel() == Vault.defaultCollectionLabel)
        #expect(!vault.db.isInTransaction)
    }

    /// Inside a write transaction `reading` runs in it, and its body still may not write; the
    /// enclosing transaction rolls back with the refusal.
    @Test func aWriteInsideReadingInsideATransactionIsRefusedToo() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let error = vaultError {
            try vault.inOneTransaction {
                try vault.add(.genericPassword, attributes: genp("mail", "a"), secret: secret("one"))
                try vault.reading { try vault.setCollectionLabel("Stolen") }
            }
        }
        #expect(error == Self.refused(vault))
        #expect(try vault.collectionLabel() == Vault.defaultCollectionLabel)
        #expect(vaultError { _ = try vault.copyMatching(Self.all) } == .itemNotFound)
        #expect(!vault.db.isInTransaction)
    }
}
