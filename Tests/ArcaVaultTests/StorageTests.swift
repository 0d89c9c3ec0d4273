import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

/// The bytes of a file, or empty if it does not exist.
func fileBytes(_ path: String) -> [UInt8] {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count, let first = needle.first else { return false }
    var i = 0
    while i <= haystack.count - needle.count {
        if haystack[i] == first, Array(haystack[i..<(i + needle.count)]) == needle { return true }
        i += 1
    }
    return false
}

@Suite struct StorageTests {
    @Test func nothingReadableOnDisk() throws {
        let dir = try TempDir()
        let marker = "Zq9marker"
        let values = ["svc", "acct", "label", "desc", "comment", "server", "path", "domain", "group", "secret"].map {
            "\(marker)-\($0)"
        }
        let generic = Array("\(marker)-generic".utf8)
        let path = dir.file("vault.db")
        func check(_ when: String) {
            for file in [path, path + "-wal", path + "-journal", path + "-shm"] {
                let bytes = fileBytes(file)
                for v in values + [String(decoding: generic, as: UTF8.self)] {
                    #expect(!contains(bytes, Array(v.utf8)), "\(when): \(v) readable in \(file)")
                    #expect(
                        !contains(bytes, Array(v.lowercased().utf8)), "\(when): \(v) (lowercased) readable in \(file)")
                }
            }
        }
        do {
            let (vault, _) = try makeVault(dir)
            for i in 0..<20 {
                try vault.add(
                    .genericPassword,
                    attributes: ItemAttributes {
                        $0.service = values[0]
                        $0.account = "\(values[1])\(i)"
                        $0.label = values[2]
                        $0.description = values[3]
                        $0.comment = values[4]
                        $0.generic = generic
                        $0.accessGroup = values[8]
                    }, secret: secret(values[9]))
                try vault.add(
                    .internetPassword,
                    attributes: ItemAttributes {
                        $0.server = values[5]
                        $0.account = "\(values[1])\(i)"
                        $0.path = values[6]
                        $0.securityDomain = values[7]
                    }, secret: secret(values[9]))
            }
            #expect(fileBytes(path + "-wal").count > 0)
            check("with the WAL")
            try vault.update(
                query { $0.service = values[0] }, changes: ItemAttributes { $0.comment = values[4] + "2" },
                secret: secret(values[9] + "2"))
            check("after update")
        }
        check("after close")
        #expect(fileBytes(path).count > 0)
    }

    @Test func itemsPersistAcrossReopen() throws {
        let dir = try TempDir()
        let path: String
        do {
            let (vault, _) = try makeVault(dir)
            path = vault.path
            try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("kept"))
        }
        let vault = try Vault.open(at: path)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        #expect(text(try vault.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "kept")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// Savepoint sub-journals stay in memory (temp_store 2 = MEMORY) on a created and on
    /// a reopened vault: none spills to a file in /var/tmp (one add in four did at 6,000
    /// attribute items, each a file created and unlinked inside the commit).
    @Test func temporaryStorageStaysInMemory() throws {
        let dir = try TempDir()
        func tempStore(_ vault: Vault) throws -> Int64 {
            let s = try vault.db.statement("PRAGMA temp_store")
            defer { s.finish() }
            #expect(try s.step())
            return s.int(0)
        }
        let (created, _) = try makeVault(dir)
        #expect(try tempStore(created) == 2)
        #expect(try tempStore(try Vault.open(at: created.path)) == 2)
    }

    @Test func rowSwappedBetweenItemsIsDetected() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("A"))
        try vault.add(.genericPassword, attributes: genp("s", "b"), secret: secret("B"))
        // Give item a the secret blob of item b.
        try vault.db.execute("UPDATE items SET secret = (SELECT secret FROM items WHERE id = 2) WHERE id = 1")
        let e = vaultError {
            _ = try vault.copyMatching(
                query({
                    $0.service = "s"
                    $0.account = "a"
                }) { $0.returnData = true })
        }
        #expect(e?.status == .decode)
        #expect(e?.description.contains(vault.path) == true)
        // Swapping the whole encrypted part (key, metadata, secret) is detected too.
        try vault.db.execute(
            """
            UPDATE items SET wrapped_key = (SELECT wrapped_key FROM items WHERE id = 2),
                meta = (SELECT meta FROM items WHERE id = 2), secret = (SELECT secret FROM items WHERE id = 2) WHERE id = 1
            """)
        #expect(vaultError { _ = try vault.copyMatching(Query(.genericPassword, matchLimit: .all)) }?.status == .decode)
    }

    @Test func rowMovedToAnotherClassIsDetected() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(
            .genericPassword, attributes: genp("s", "a") { $0.accessible = .whenUnlocked }, secret: secret("A"))
        try vault.db.execute("UPDATE items SET accessible = \(Accessibility.afterFirstUnlock.rawValue)")
        let e = vaultError { _ = try vault.copyMatching(query { $0.service = "s" }) }
        #expect(e?.status == .decode)
        try vault.db.execute("UPDATE items SET accessible = 1, class = 2")
        #expect(vaultError { _ = try vault.copyMatching(Query(.internetPassword)) }?.status == .decode)
    }

    @Test func rowReplayedFromAnotherVaultIsDetected() throws {
        let dir = try TempDir()
        let (a, _) = try makeVault(dir, name: "a.db")
        let (b, _) = try makeVault(dir, name: "b.db")  // same password, same KDF salt
        try b.add(.genericPassword, attributes: genp("s", "x"), secret: secret("from b"))
        try a.db.execute(
            "ATTACH DATABASE '\(b.path)' AS other; INSERT INTO items SELECT * FROM other.items; DETACH other")
        #expect(try a.itemCount() == 1)
        let e = vaultError { _ = try a.copyMatching(Query(.genericPassword, matchLimit: .all, returnData: true)) }
        #expect(e?.status == .decode)
    }

    @Test func damagedFilesGiveAClearErrorNamingTheFile() throws {
        let dir = try TempDir()
        let path: String
        do {
            let (vault, _) = try makeVault(dir)
            path = vault.path
            for i in 0..<200 {
                try vault.add(
                    .genericPassword, attributes: genp("s", "a\(i)"), secret: secret(String(repeating: "x", count: 500))
                )
            }
        }
        let good = fileBytes(path)
        #expect(good.count > 64 * 1024)
        func expectDamaged(_ bytes: [UInt8], _ what: String) throws {
            let p = dir.file("\(what).db")
            FileManager.default.createFile(atPath: p, contents: Data(bytes))
            let e = vaultError {
                let v = try Vault.open(at: p)
                try v.unlock(password: secret(password))
                _ = try v.copyMatching(Query(.genericPassword, matchLimit: .all, returnData: true))
            }
            #expect(e?.status == .decode, "\(what): \(String(describing: e))")
            #expect(e?.description.contains(p) == true, "\(what): \(String(describing: e))")
        }
        try expectDamaged(Array(good.prefix(good.count / 2)), "truncated")
        try expectDamaged(Array(good.prefix(50)), "truncated-header")
        try expectDamaged([], "empty")
        try expectDamaged(
            Array("this is a text file, not a vault\n".utf8) + Array(repeating: 65, count: 200), "foreign")
        var corrupted = good
        for i in stride(from: 8192, to: corrupted.count, by: 7) { corrupted[i] ^= 0x5a }
        try expectDamaged(corrupted, "corrupted")
        var flipped = good
        flipped[flipped.count - 4096 - 100] ^= 1  // one bit inside an item near the end
        let p = dir.file("flipped.db")
        FileManager.default.createFile(atPath: p, contents: Data(flipped))
        let v = try Vault.open(at: p)
        try v.unlock(password: secret(password))
        // A single flipped bit either breaks a page (SQLite) or an item (AEAD): never a silent success.
        let e = vaultError { _ = try v.copyMatching(Query(.genericPassword, matchLimit: .all, returnData: true)) }
        if let e { #expect(e.status == .decode) }
        // Another SQLite database is not a vault.
        let other = dir.file("other.db")
        do { try Database(path: other, create: true).execute("CREATE TABLE t(x)") }
        #expect(
            vaultError { _ = try Vault.open(at: other) }
                == .damaged(path: other, reason: "not an Arca vault (no schema_version table)"))
        #expect(
            vaultError { _ = try Vault.open(at: dir.file("missing.db")) } == .noSuchVault(path: dir.file("missing.db")))
    }

    @Test func newerSchemaIsRefusedAndCurrentNeedsNoMigration() throws {
        let dir = try TempDir()
        let path: String
        do {
            let (vault, _) = try makeVault(dir)
            path = vault.path
            #expect(try Schema.currentVersion(vault.db, path: path) == Vault.schemaVersion)
            try vault.db.execute("UPDATE schema_version SET version = 99")
        }
        #expect(vaultError { _ = try Vault.open(at: path) } == .unsupportedVersion(path: path, version: 99))
    }

    @Test func batchIsAllOrNothing() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.batch {
            for i in 0..<10 { try vault.add(.genericPassword, attributes: genp("b", "\(i)"), secret: secret("x")) }
        }
        #expect(try vault.itemCount() == 10)
        let e = vaultError {
            try vault.batch {
                try vault.add(.genericPassword, attributes: genp("b", "new"), secret: secret("x"))
                try vault.add(.genericPassword, attributes: genp("b", "0"), secret: secret("x"))  // duplicate
            }
        }
        #expect(e == .duplicateItem)
        #expect(try vault.itemCount() == 10)
        // An update inside a batch (a nested transaction) commits with it.
        try vault.batch { try vault.update(query { $0.service = "b" }, changes: ItemAttributes { $0.label = "l" }) }
        #expect(try vault.copyMatching(query({ $0.label = "l" }) { $0.matchLimit = .all }).count == 10)
    }

    @Test func migrationsRunInOrderAndAFailedOneLeavesTheOldVersion() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        #expect(Vault.schemaVersion == 3)
        let steps: [Int: @Sendable (Database) throws -> Void] = [
            3: { try $0.execute("ALTER TABLE items ADD COLUMN extra INTEGER") },
            4: { _ in throw VaultError.param("step 4 fails") },
        ]
        #expect(
            vaultError { try Schema.migrate(vault.db, path: vault.path, target: 5, migrations: steps) }
                == .param("step 4 fails"))
        #expect(try Schema.currentVersion(vault.db, path: vault.path) == 4)  // step 3 kept, step 4 rolled back
        #expect(
            vaultError { try Schema.migrate(vault.db, path: vault.path, target: 6, migrations: [4: { _ in }]) }?.status
                == .decode)
        try Schema.migrate(vault.db, path: vault.path, target: 5, migrations: [4: { _ in }])
        #expect(try Schema.currentVersion(vault.db, path: vault.path) == 5)
    }

    @Test func aVersion1VaultGainsTheAttributeIndexOnOpen() throws {
        let dir = try TempDir()
        let path: String
        do {
            let (vault, _) = try makeVault(dir)
            path = vault.path
            try vault.add(.genericPassword, attributes: genp("kept", "a"), secret: secret("x"))
            // Back to the shape of a version-1 file.
            try vault.db.execute("DROP TABLE attr_tags; DROP TABLE sync_pending; UPDATE schema_version SET version = 1")
        }
        let vault = try Vault.open(at: path)
        #expect(try Schema.currentVersion(vault.db, path: path) == 3)
        try vault.unlock(password: secret(password), classes: [.whenUnlocked, .afterFirstUnlock])
        let item = try vault.addAttributeItem(
            label: "l", attributes: ["k": "v"], contentType: "text/plain", secret: secret("s"), accessible: nil,
            replace: false)
        #expect(try vault.searchAttributeItems(["k": "v"]).unlocked.map(\.reference) == [item.item.reference])
        #expect(try vault.copyMatching(query { $0.service = "kept" }).count == 1)
    }
}

@Suite struct NestedTransactionTests {
    /// SQLite rolls a transaction back by itself after SQLITE_FULL/IOERR/NOMEM (simulated
    /// here with a ROLLBACK under the outer transaction's feet): a nested write must then
    /// fail, not open and commit a transaction of its own.
    @Test func aSavepointAfterTheOuterTransactionWasRolledBackIsRefused() throws {
        let dir = try TempDir()
        let db = try Database(path: dir.file("t.db"), create: true)
        try db.execute("CREATE TABLE t(x INTEGER)")
        var nestedError: SQLiteError?
        #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("ROLLBACK")
                do {
                    try db.transaction { try db.execute("INSERT INTO t VALUES (2)") }
                } catch let error as SQLiteError {
                    nestedError = error
                }
            }
        }
        // 4 is SQLITE_ABORT.
        #expect(nestedError == SQLiteError(code: 4, message: "the enclosing transaction was rolled back"))
        let count = try db.statement("SELECT count(*) FROM t")
        #expect(try count.step() == true)
        #expect(count.int(0) == 0)
        count.finish()
    }
}
