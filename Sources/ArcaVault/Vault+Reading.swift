/// Several reads of one request in one transaction.
extension Vault {
    /// Runs `body`, which only reads the vault (`copyMatching` and the like), in one read
    /// transaction: one snapshot and one shared lock of the WAL for all its queries, where
    /// each query alone takes and drops them (arcad's unlock read the items of two classes
    /// in ten queries). Inside another transaction, `body` runs in that one. `body` must
    /// not wait (a snapshot held keeps the WAL from restarting), and cannot write: any write
    /// inside it (`add`, `setCollectionLabel` …) fails with `storage(path:reason:)`, reason
    /// "a write inside a read transaction", and changes nothing. Public for arcad, its one
    /// caller outside ArcaVault (which no product exports).
    public func reading<R>(_ body: () throws -> R) throws -> R {
        try guarded { try db.read(body) }
    }
}
