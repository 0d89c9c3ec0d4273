/// Several writes made durable together: arcad's group commit runs a burst of
/// writers' changes in one transaction, each change in its own savepoint (a failing
/// one undoes only itself), and commits once — one WAL sync for the whole burst.
extension Vault {
    /// Runs `body` in one transaction, committed (and synced) when it returns and
    /// rolled back if it throws. Writes inside it (`add`, `addAttributeItem` …) each
    /// become a savepoint. Nothing of it is durable before this returns.
    public func inOneTransaction<R>(_ body: () throws -> R) throws -> R {
        try guarded { try db.transaction(body) }
    }

    /// Whether a transaction is open: SQLite rolls one back by itself after some disk
    /// errors, and a write made after that would commit on its own.
    public var isInTransaction: Bool { db.isInTransaction }
}
