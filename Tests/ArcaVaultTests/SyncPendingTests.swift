import ArcaCrypto
import Testing

@testable import ArcaVault

/// `sync_pending`: every write that touches a synchronizable row notes its primary-key tag in
/// the same transaction; the circle's own writes and non-synchronizable rows note nothing.
@Suite struct SyncPendingTests {
    func synced(_ service: String, _ body: (inout ItemAttributes) -> Void = { _ in }) -> ItemAttributes {
        genp(service, "alice") {
            $0.synchronizable = true
            body(&$0)
        }
    }

    func tag(_ vault: Vault, _ service: String) throws -> [UInt8] {
        let item = PortableItem(itemClass: .genericPassword, attributes: synced(service), secret: try secret(""))
        return try vault.primaryKeyTag(of: item)
    }

    /// A new vault starts with one `compareEverything` tag; cleared here so each test sees its own.
    func freshVault(_ dir: TempDir) throws -> Vault {
        let (vault, _) = try makeVault(dir)
        #expect(try vault.pendingSyncChanges() == [Vault.compareEverything])
        try vault.clearPendingSyncChanges([Vault.compareEverything])
        #expect(try vault.pendingSyncChanges() == [])
        return vault
    }

    @Test func addUpdateAndDeleteOfASynchronizableItemAreNotedOnce() throws {
        let dir = try TempDir()
        let vault = try freshVault(dir)
        try vault.add(.genericPassword, attributes: genp("local", "alice"), secret: secret("l"))
        #expect(try vault.pendingSyncChanges() == [])
        try vault.add(.genericPassword, attributes: synced("mail"), secret: secret("s"))
        let mail = try tag(vault, "mail")
        #expect(try vault.pendingSyncChanges() == [mail])
        try vault.update(
            query({ $0.service = "mail" }) { $0.synchronizable = .yes }, changes: ItemAttributes(), secret: secret("t"))
        #expect(try vault.pendingSyncChanges() == [mail])
        guard case .item(let item) = try vault.synchronizedRow(tag: mail) else {
            Issue.record("the row is not read")
            return
        }
        #expect(text(item.secret) == "t" && item.attributes.service == "mail" && item.isSynchronizable)
        try vault.clearPendingSyncChanges([mail])
        // A rename notes the old key (now absent) and the new one.
        try vault.update(
            query({ $0.service = "mail" }) { $0.synchronizable = .yes },
            changes: ItemAttributes { $0.service = "post" })
        let post = try tag(vault, "post")
        #expect(Set(try vault.pendingSyncChanges()) == [mail, post])
        guard case .absent = try vault.synchronizedRow(tag: mail) else {
            Issue.record("the renamed-away key still reads")
            return
        }
        try vault.clearPendingSyncChanges([mail, post])
        try vault.delete(query({ $0.service = "post" }) { $0.synchronizable = .yes })
        #expect(try vault.pendingSyncChanges() == [post])
        // Making an item not synchronizable is its delete for sync.
        try vault.clearPendingSyncChanges([post])
        try vault.add(.genericPassword, attributes: synced("chat"), secret: secret("c"))
        try vault.clearPendingSyncChanges([try tag(vault, "chat")])
        try vault.update(
            query({ $0.service = "chat" }) { $0.synchronizable = .yes },
            changes: ItemAttributes { $0.synchronizable = false })
        #expect(try vault.pendingSyncChanges() == [try tag(vault, "chat")])
    }

    @Test func theCirclesOwnWritesNoteNothingAndARefusedWriteNotesNothing() throws {
        let dir = try TempDir()
        let vault = try freshVault(dir)
        let item = PortableItem(itemClass: .genericPassword, attributes: synced("mail"), secret: try secret("s"))
        var dated = item
        (dated.attributes.creationDate, dated.attributes.modificationDate) = (1_000, 2_000)
        try vault.putSynced(dated)
        try vault.removeSynced(dated)
        #expect(try vault.pendingSyncChanges() == [])
        try vault.add(.genericPassword, attributes: synced("mail"), secret: secret("s"))
        try vault.clearPendingSyncChanges([try tag(vault, "mail")])
        // A duplicate add rolls back with its tag.
        let duplicate = vaultError { try vault.add(.genericPassword, attributes: synced("mail"), secret: secret("x")) }
        #expect(duplicate == .duplicateItem)
        #expect(try vault.pendingSyncChanges() == [])
    }

    @Test func aLockedRowStaysReadableAsLockedAndWithoutSyncOnlyCompareEverythingIsKept() throws {
        let dir = try TempDir()
        let vault = try freshVault(dir)
        try vault.add(.genericPassword, attributes: synced("mail"), secret: secret("s"))
        let mail = try tag(vault, "mail")
        vault.lock([.whenUnlocked])
        guard case .locked = try vault.synchronizedRow(tag: mail) else {
            Issue.record("a locked row was not reported as locked")
            return
        }
        try vault.resetPendingSyncChanges()
        #expect(try vault.pendingSyncChanges() == [Vault.compareEverything])
        // With compareEverything in, other tags are cleared only past the limit.
        _ = try vault.unlock(password: secret(password), classes: [.whenUnlocked])
        try vault.add(.genericPassword, attributes: synced("chat"), secret: secret("c"))
        try vault.resetPendingSyncChanges(limit: 2)
        #expect(Set(try vault.pendingSyncChanges()) == [Vault.compareEverything, try tag(vault, "chat")])
        try vault.add(.genericPassword, attributes: synced("news"), secret: secret("n"))
        try vault.resetPendingSyncChanges(limit: 2)
        #expect(try vault.pendingSyncChanges() == [Vault.compareEverything])
    }

    @Test func aVersion2VaultGainsTheTableWithCompareEverything() throws {
        let dir = try TempDir()
        let path: String
        do {
            let vault = try freshVault(dir)
            path = vault.path
            try vault.db.execute("DROP TABLE sync_pending; UPDATE schema_version SET version = 2")
        }
        let vault = try Vault.open(at: path)
        #expect(try Schema.currentVersion(vault.db, path: path) == 3)
        #expect(try vault.pendingSyncChanges() == [Vault.compareEverything])
    }
}
