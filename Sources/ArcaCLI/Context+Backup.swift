import ArcaCrypto
import ArcaProtocol

/// `arca export` and `arca import`: arcad seals and opens the backup (it holds the vault
/// key); the CLI reads the recovery key or passphrase from stdin and moves the bytes.
extension Context {
    mutating func exportBackup(to path: String, passphrase: Bool, output: inout Output) throws(CLIError) {
        let secret =
            passphrase
            ? try password(prompt: "backup passphrase: ", confirm: true)
            : try input.line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
        var text = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&text) }
        var request = Request.exportItems(uid: uid, secret: text, passphrase: passphrase)
        defer { request.wipeSecrets() }
        let reply: Reply
        do { reply = try send(request, what: "export") } catch {
            // arcad checked the recovery key against the vault: say which secret was wrong.
            guard case .status(.authFailed, _, _) = error, !passphrase else { throw error }
            throw .status(.authFailed, what: "export", detail: "wrong recovery key: it does not open this vault")
        }
        guard case .backup(let bytes) = reply else {
            throw .failure(what: "export", why: "unexpected reply from arcad")
        }
        do { try BackupFile.create(path, bytes) } catch { throw .failure(what: "export", why: error.message) }
        output.line("exported to \(path)")
    }

    mutating func importBackup(from path: String, output: inout Output) throws(CLIError) {
        let bytes: [UInt8]
        do { bytes = try BackupFile.read(path, limit: ProtocolLimits.maximumBackupLength) } catch {
            throw .failure(what: "import", why: error.message)
        }
        // Byte 4 of a backup says what it is sealed to (arca-vault(5)); arcad checks it again.
        let sealedToPassphrase = bytes.count > 4 && bytes[4] == 2
        let secret =
            sealedToPassphrase
            ? try password(prompt: "backup passphrase: ")
            : try input.line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
        var text = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&text) }
        var request = Request.importItems(uid: uid, backup: bytes, secret: text)
        defer { request.wipeSecrets() }
        guard case .importSummary(let added, let replaced, let unchanged) = try send(request, what: "import") else {
            throw .failure(what: "import", why: "unexpected reply from arcad")
        }
        output.line("added \(added), replaced \(replaced), unchanged \(unchanged)")
    }
}
