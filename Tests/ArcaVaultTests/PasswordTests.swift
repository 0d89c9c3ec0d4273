import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

@Suite struct PasswordTests {
    @Test func changePasswordRewrapsOnlyTheMasterKey() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("v"))
        let metaBefore = try rows(vault)
        try vault.changePassword(old: secret(password), new: secret("new pw"), uncheckedParameters: cheapKDF)
        #expect(try rows(vault) == metaBefore)  // no item was re-encrypted
        let reopened = try Vault.open(at: vault.path)
        #expect(vaultError { try reopened.unlock(password: secret(password)) } == .authFailed)
        try reopened.unlock(password: secret("new pw"))
        #expect(text(try reopened.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "v")
        // Wrong old password: nothing changes.
        #expect(
            vaultError {
                try reopened.changePassword(old: secret("nope"), new: secret("x"), uncheckedParameters: cheapKDF)
            } == .authFailed)
        try Vault.open(at: vault.path).unlock(password: secret("new pw"))
        // The public entry point keeps the cost and changes the salt.
        let before = reopened.kdfParameters
        try reopened.changePassword(old: secret("new pw"), new: secret("third"))
        #expect(reopened.kdfParameters.memoryLimit == before.memoryLimit && reopened.kdfParameters.salt != before.salt)
        try Vault.open(at: vault.path).unlock(password: secret("third"))
    }

    @Test func changePasswordWithDerivedKeys() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let old = try Argon2id.deriveKey(password: secret(password), parameters: vault.kdfParameters)
        let params = KDFParameters(opsLimit: 1, memoryLimit: 8 << 20, salt: Array(repeating: 9, count: 16))
        let new = try Argon2id.deriveKey(password: secret("pam new"), parameters: params)
        try vault.changePassword(oldDerivedKey: old, newDerivedKey: new, newParameters: params)
        #expect(try Vault.kdfParameters(at: vault.path) == params)
        try Vault.open(at: vault.path).unlock(password: secret("pam new"))
    }

    @Test func recoveryKeyIsPrintableWithAChecksum() throws {
        let key = try RecoveryKey.generate()
        let printable = try #require(text(try key.printable()))
        #expect(printable.count == 58 + 14)  // 58 characters in groups of 4
        let groups = printable.components(separatedBy: "-").map { $0.count }
        #expect(groups.dropLast().allSatisfy { $0 == 4 } && groups.last == 2)
        let parsed = try RecoveryKey(parsing: secret(printable.lowercased().replacingOccurrences(of: "-", with: " ")))
        #expect(parsed.key == key.key)
        var typo = Array(printable)
        typo[5] = typo[5] == "A" ? "B" : "A"
        #expect(vaultError { _ = try RecoveryKey(parsing: secret(String(typo))) }?.status == .param)
        #expect(vaultError { _ = try RecoveryKey(parsing: secret(String(printable.dropLast(3)))) }?.status == .param)
        #expect(vaultError { _ = try RecoveryKey(parsing: secret(printable + "!")) }?.status == .param)
    }

    @Test func recoveryKeyUnlocksAndResetsThePassword() throws {
        let dir = try TempDir()
        let (vault, recovery) = try makeVault(dir, recovery: true)
        let key = try #require(recovery)
        #expect(vault.hasRecoveryKey)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("v"))
        let reopened = try Vault.open(at: vault.path)
        try reopened.unlock(recoveryKey: RecoveryKey(parsing: key.printable()))
        #expect(text(try reopened.copyMatching(query({ $0.service = "s" }) { $0.returnData = true })[0].data) == "v")
        #expect(vaultError { try reopened.unlock(recoveryKey: RecoveryKey.generate()) } == .authFailed)
        try reopened.resetPassword(recoveryKey: key, newPassword: secret("after reset"), uncheckedParameters: cheapKDF)
        #expect(vaultError { try Vault.open(at: vault.path).unlock(password: secret(password)) } == .authFailed)
        try Vault.open(at: vault.path).unlock(password: secret("after reset"))
    }

    @Test func vaultWithoutRecoveryKeyRefusesOneAndCanEnrollOne() throws {
        let dir = try TempDir()
        let (vault, none) = try makeVault(dir)
        #expect(none == nil && !vault.hasRecoveryKey)
        #expect(vaultError { try vault.unlock(recoveryKey: RecoveryKey.generate()) } == .authFailed)
        #expect(vaultError { _ = try vault.enrollRecoveryKey(password: secret("wrong")) } == .authFailed)
        let enrolled = try vault.enrollRecoveryKey(password: secret(password))
        try Vault.open(at: vault.path).unlock(recoveryKey: enrolled)
    }

    @Test func anOpenVaultSeesAPasswordChangedByAnotherConnection() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let other = try Vault.open(at: vault.path)
        try vault.changePassword(
            old: secret(password), new: secret("changed"),
            uncheckedParameters: KDFParameters(opsLimit: 1, memoryLimit: 8 << 20, salt: Array(repeating: 3, count: 16)))
        try other.unlock(password: secret("changed"))
        #expect(other.unlockedClasses == [.whenUnlocked, .afterFirstUnlock])
    }

    /// The encrypted columns of every row.
    func rows(_ vault: Vault) throws -> [[UInt8]] {
        let s = try vault.db.statement("SELECT wrapped_key || meta || secret FROM items ORDER BY id")
        defer { s.finish() }
        var out: [[UInt8]] = []
        while try s.step() { out.append(s.blob(0)) }
        return out
    }
}
