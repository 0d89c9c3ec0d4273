import ArcaCrypto
import Testing

@testable import ArcaVault

@Suite struct LockTests {
    @Test func lockedClassReadsAndWritesAreInteractionNotAllowed() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("wu"))
        vault.lock(Accessibility.whenUnlockedClasses)
        #expect(vault.unlockedClasses == [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly])
        let read = vaultError {
            _ = try vault.copyMatching(
                query {
                    $0.service = "s"
                    $0.account = "a"
                })
        }
        #expect(read == .locked)
        #expect(read?.status.rawValue == -25308)
        // The locked check comes before the duplicate check.
        #expect(
            vaultError { try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("x")) } == .locked)
        #expect(
            vaultError { try vault.update(query { $0.service = "s" }, changes: ItemAttributes { $0.label = "x" }) }
                == .locked)
        #expect(vaultError { try vault.delete(query { $0.service = "s" }) } == .locked)
        // Other classes still work, and nothing matching anywhere is still "not found".
        try vault.add(
            .genericPassword, attributes: genp("t", "a") { $0.accessible = .afterFirstUnlock }, secret: secret("afu"))
        #expect(vaultError { _ = try vault.copyMatching(query { $0.service = "missing" }) } == .itemNotFound)
        try vault.unlock(password: secret(password), hostSecret: secret(hostSecretText), classes: [.whenUnlocked])
        #expect(text(try vault.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "wu")
    }

    @Test func multiItemQueriesSkipLockedItemsAndAllLockedIsLockedNotNotFound() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "wu"), secret: secret("1"))
        try vault.add(
            .genericPassword, attributes: genp("s", "afu") { $0.accessible = .afterFirstUnlock }, secret: secret("2"))
        vault.lock([.whenUnlocked])
        let r = try vault.copyMatching(
            query({ $0.service = "s" }) {
                $0.matchLimit = .all
                $0.returnData = true
            })
        #expect(r.compactMap { text($0.data) } == ["2"])
        #expect(try vault.delete(query { $0.service = "s" }) == 1)  // only the unlocked one
        #expect(try vault.itemCount() == 1)
        #expect(
            vaultError { _ = try vault.copyMatching(query({ $0.service = "s" }) { $0.matchLimit = .all }) } == .locked)
        vault.lockAll()
        #expect(vault.unlockedClasses.isEmpty)
        #expect(vaultError { _ = try vault.copyMatching(query { $0.service = "s" }) } == .locked)
        #expect(vaultError { try vault.delete(query { $0.service = "s" }) } == .locked)
        #expect(
            vaultError { try vault.add(.genericPassword, attributes: genp("n", "n"), secret: secret("x")) } == .locked)
        // With everything locked, a class without any item is still not found.
        #expect(vaultError { _ = try vault.copyMatching(Query(.internetPassword)) } == .itemNotFound)
    }

    @Test func updateIntoALockedClassIsLocked() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(
            .genericPassword, attributes: genp("s", "a") { $0.accessible = .afterFirstUnlock }, secret: secret("1"))
        vault.lock([.whenUnlocked])
        #expect(
            vaultError {
                try vault.update(query { $0.service = "s" }, changes: ItemAttributes { $0.accessible = .whenUnlocked })
            } == .locked)
    }

    @Test func thisDeviceOnlyClassesNeedTheHostSecret() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(
            .genericPassword, attributes: genp("s", "tdo") { $0.accessible = .whenUnlockedThisDeviceOnly },
            secret: secret("t"))
        let path = vault.path
        let reopened = try Vault.open(at: path)
        // No host secret: the ThisDeviceOnly classes stay locked.
        let loaded = try reopened.unlock(password: secret(password))
        #expect(loaded == [.whenUnlocked, .afterFirstUnlock])
        #expect(vaultError { _ = try reopened.copyMatching(query { $0.service = "s" }) } == .locked)
        // A different host secret (a copied vault on another machine): still locked.
        let wrongHost = try reopened.unlock(
            password: secret(password), hostSecret: secret("another-host-secret-xxxxxx"))
        #expect(wrongHost == [.whenUnlocked, .afterFirstUnlock])
        #expect(vaultError { _ = try reopened.copyMatching(query { $0.service = "s" }) } == .locked)
        // The right one opens them.
        let right = try reopened.unlock(password: secret(password), hostSecret: secret(hostSecretText))
        #expect(right == Accessibility.all)
        #expect(text(try reopened.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "t")
        #expect(
            vaultError { try reopened.unlock(password: secret(password), hostSecret: secret("short")) }?.status
                == .param)
    }

    @Test func unlockWithDerivedKeyAndReadParametersWithoutUnlocking() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("v"))
        let params = try Vault.kdfParameters(at: vault.path)
        #expect(params == cheapKDF)
        let reopened = try Vault.open(at: vault.path)
        #expect(reopened.unlockedClasses.isEmpty)
        #expect(vaultError { _ = try reopened.copyMatching(query { $0.service = "s" }) } == .locked)
        let key = try Argon2id.deriveKey(password: secret(password), parameters: reopened.kdfParameters)
        try reopened.unlock(derivedKey: key)
        #expect(text(try reopened.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "v")
        let wrong = vaultError { try reopened.unlock(derivedKey: SecretBytes.random(count: 32)) }
        #expect(wrong == .authFailed)
        #expect(wrong?.status.rawValue == -25293)
        #expect(vaultError { try Vault.open(at: vault.path).unlock(password: secret("wrong")) } == .authFailed)
    }

    @Test func defaultKDFIsCalibratedToAtLeast64MiB() throws {
        let dir = try TempDir()
        let created = try Vault.create(at: dir.file("v.db"), password: secret("p"), targetSeconds: 0.05)
        #expect(created.vault.kdfParameters.memoryLimit >= 64 << 20)
        #expect(
            vaultError { _ = try Vault.create(at: dir.file("w.db"), password: secret("p"), kdfParameters: cheapKDF) }?
                .status == .param)
        #expect(
            vaultError {
                _ = try Vault.create(at: dir.file("v.db"), password: secret("p"), uncheckedParameters: cheapKDF)
            }
                == .alreadyExists(path: dir.file("v.db")))
    }
}
