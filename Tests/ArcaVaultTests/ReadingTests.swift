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
}
