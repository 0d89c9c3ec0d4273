import ArcaCrypto
import Foundation
import Testing

@testable import ArcaVault

/// A cheap Argon2id setting (8 MiB, 1 pass) so that tests do not spend seconds in the KDF.
let cheapKDF = KDFParameters(opsLimit: 1, memoryLimit: 8 << 20, salt: Array(repeating: 7, count: 16))

/// A fresh temporary directory, removed by `cleanup`.
final class TempDir {
    let path: String

    init() throws {
        let template = NSTemporaryDirectory() + "arca-vault-test.XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw VaultError.param("mkdtemp failed") }
        path = String(cString: made)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A secret from a test string.
func secret(_ s: String) throws -> SecretBytes {
    var bytes = Array(s.utf8)
    return try SecretBytes(consuming: &bytes)
}

/// The bytes of a secret as a string, for assertions.
func text(_ s: SecretBytes?) -> String? {
    s.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

let password = "correct horse battery staple"
let hostSecretText = "host-secret-0123456789abcdef"

/// A new vault, unlocked (all classes, host secret given), in `dir`.
func makeVault(_ dir: TempDir, name: String = "vault.db", recovery: Bool = false) throws -> (Vault, RecoveryKey?) {
    let result = try Vault.create(
        at: dir.file(name), password: secret(password), uncheckedParameters: cheapKDF,
        hostSecret: secret(hostSecretText), recoveryKey: recovery)
    return (result.vault, result.recoveryKey)
}

/// Generic-password attributes.
func genp(_ service: String, _ account: String, group: String? = nil, _ body: (inout ItemAttributes) -> Void = { _ in })
    -> ItemAttributes
{
    var a = ItemAttributes()
    a.service = service
    a.account = account
    a.accessGroup = group
    body(&a)
    return a
}

/// A query for generic passwords.
func query(_ body: (inout ItemAttributes) -> Void, _ configure: (inout Query) -> Void = { _ in }) -> Query {
    var q = Query(.genericPassword, attributes: ItemAttributes(body))
    configure(&q)
    return q
}

/// The error a throwing call raised, as a VaultError (nil if none or another type).
func vaultError(_ body: () throws -> Void) -> VaultError? {
    do {
        try body()
        return nil
    } catch let e as VaultError {
        return e
    } catch {
        return nil
    }
}
