/// The database schema and its migrations. `schema_version` holds one row; each
/// migration moves the file from version n to n + 1 inside one transaction, so a
/// crash mid-migration leaves the old version intact.
enum Schema {
    /// Migrations by the version they start from. Version 1 is the first; a future
    /// change appends `2: { db in … }` here and bumps `Vault.schemaVersion`.
    static let migrations: [Int: @Sendable (Database) throws -> Void] = [1: addAttributeTags, 2: addSyncPending]

    /// Version 2: the blind index of Secret Service attributes, one row per
    /// (attribute pair, item). Items are found by intersecting the rows of each pair.
    static func addAttributeTags(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE attr_tags(tag BLOB NOT NULL, item INTEGER NOT NULL, PRIMARY KEY(tag, item)) WITHOUT ROWID;
            CREATE INDEX attr_tags_item ON attr_tags(item);
            """)
    }

    /// Version 3: the sync outbox's pending primary-key tags (`Vault+SyncPending`). The empty
    /// tag asks for one comparison of every item: changes made before the table existed.
    static func addSyncPending(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE sync_pending(pk BLOB PRIMARY KEY) WITHOUT ROWID;
            INSERT INTO sync_pending(pk) VALUES (x'');
            """)
    }

    /// A new file at the current version: version 1, then every migration, in the
    /// caller's transaction.
    static func createCurrent(_ db: Database, target: Int = Vault.schemaVersion) throws {
        try createVersion1(db)
        for version in 1..<target {
            guard let step = migrations[version] else { continue }
            try step(db)
        }
        try db.statement("UPDATE schema_version SET version = ?").bind(.integer(Int64(target))).run()
    }

    static func createVersion1(_ db: Database) throws {
        try db.execute(
            """
            CREATE TABLE schema_version(version INTEGER NOT NULL);
            INSERT INTO schema_version(version) VALUES (1);
            CREATE TABLE header(name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE items(
                id INTEGER PRIMARY KEY,
                ref BLOB NOT NULL UNIQUE,
                class INTEGER NOT NULL,
                accessible INTEGER NOT NULL,
                sync INTEGER NOT NULL,
                pk BLOB NOT NULL UNIQUE,
                svc BLOB NOT NULL,
                acct BLOB NOT NULL,
                srv BLOB NOT NULL,
                grp BLOB NOT NULL,
                wrapped_key BLOB NOT NULL,
                meta BLOB NOT NULL,
                secret BLOB NOT NULL);
            CREATE INDEX items_svc ON items(svc);
            CREATE INDEX items_acct ON items(acct);
            CREATE INDEX items_srv ON items(srv);
            CREATE INDEX items_grp ON items(grp);
            """)
    }

    /// Brings the file to `target` (`Vault.schemaVersion`), or refuses a newer one.
    static func migrate(
        _ db: Database, path: String, target: Int = Vault.schemaVersion,
        migrations: [Int: @Sendable (Database) throws -> Void] = Schema.migrations
    ) throws {
        var version = try currentVersion(db, path: path)
        guard version <= target else {
            throw VaultError.unsupportedVersion(path: path, version: version)
        }
        while version < target {
            guard let step = migrations[version] else {
                throw VaultError.damaged(path: path, reason: "no migration from schema version \(version)")
            }
            try db.transaction {
                try step(db)
                try db.statement("UPDATE schema_version SET version = ?").bind(.integer(Int64(version + 1))).run()
            }
            version += 1
        }
    }

    static func currentVersion(_ db: Database, path: String) throws -> Int {
        let exists = try db.statement(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        defer { exists.finish() }
        guard try exists.step(), exists.int(0) == 1 else {
            throw VaultError.damaged(path: path, reason: "not an Arca vault (no schema_version table)")
        }
        let s = try db.statement("SELECT version FROM schema_version")
        defer { s.finish() }
        guard try s.step() else { throw VaultError.damaged(path: path, reason: "the schema version is missing") }
        return Int(s.int(0))
    }
}
