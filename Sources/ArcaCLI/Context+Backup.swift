import ArcaCrypto
import ArcaProtocol

/// `arca export` and `arca import`: arcad seals and opens the backup (it holds the vault
/// key); the CLI reads the recovery key or passphrase from stdin and moves the bytes, in
/// chunks of at most 1 MiB over one connection (arcad stages at most 256 MiB per user).
extension Context {
    /// How long one backup request may take: sealing or merging thousands of items.
    static let backupTimeoutMilliseconds = 600_000

    mutating func exportBackup(to path: String, passphrase: Bool, output: inout Output) throws(CLIError) {
        // Refuses an existing path before asking anything; the file appears only when whole.
        let file: BackupFile.Writer
        do { file = try BackupFile.Writer(path: path) } catch { throw .failure(what: "export", why: error.message) }
        let secret =
            passphrase
            ? try password(prompt: "backup passphrase: ", confirm: true)
            : try input.line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
        var text = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&text) }
        var request = Request.stageExport(uid: uid, secret: text, passphrase: passphrase)
        defer { request.wipeSecrets() }
        timeoutMilliseconds = Self.backupTimeoutMilliseconds
        let reply: Reply
        do { reply = try send(request, what: "export") } catch {
            // arcad checked the recovery key against the vault: say which secret was wrong.
            guard case .status(.authFailed, _, _) = error, !passphrase else { throw error }
            throw .status(.authFailed, what: "export", detail: "wrong recovery key: it does not open this vault")
        }
        guard case .backupStaged(let length) = reply else {
            throw .failure(what: "export", why: "unexpected reply from arcad")
        }
        var offset: UInt64 = 0
        while offset < length {
            guard case .backupChunk(let chunk) = try send(.readExport(uid: uid, offset: offset), what: "export"),
                !chunk.isEmpty, UInt64(chunk.count) <= length - offset
            else { throw .failure(what: "export", why: "unexpected reply from arcad") }
            do { try file.append(chunk) } catch { throw .failure(what: "export", why: error.message) }
            offset += UInt64(chunk.count)
        }
        do { try file.commit() } catch { throw .failure(what: "export", why: error.message) }
        output.line("exported to \(path)")
    }

    mutating func importBackup(from path: String, output: inout Output) throws(CLIError) {
        let file: BackupFile.Reader
        var chunk: [UInt8]
        let piece = ProtocolLimits.maximumBackupChunkLength
        do {
            file = try BackupFile.Reader(path: path)
            chunk = try file.read(at: 0, count: Int(min(UInt64(piece), file.length)))
        } catch {
            throw .failure(what: "import", why: error.message)
        }
        guard file.length > 0 else { throw .failure(what: "import", why: "\(path): empty file, not an Arca backup") }
        // Byte 4 of a backup says what it is sealed to (arca-vault(5)); arcad checks it again.
        let sealedToPassphrase = chunk.count > 4 && chunk[4] == 2
        let secret =
            sealedToPassphrase
            ? try password(prompt: "backup passphrase: ")
            : try input.line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
        var text = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&text) }
        timeoutMilliseconds = Self.backupTimeoutMilliseconds
        var offset: UInt64 = 0
        while offset < file.length {
            if offset > 0 {
                do { chunk = try file.read(at: offset, count: Int(min(UInt64(piece), file.length - offset))) } catch {
                    throw .failure(what: "import", why: error.message)
                }
            }
            guard !chunk.isEmpty else { throw .failure(what: "import", why: "\(path): shrank while being read") }
            let next = offset + UInt64(chunk.count)
            let request = Request.stageImport(uid: uid, total: file.length, offset: offset, chunk: chunk)
            guard case .backupReceived(next) = try send(request, what: "import") else {
                throw .failure(what: "import", why: "unexpected reply from arcad")
            }
            offset = next
        }
        var request = Request.importStaged(uid: uid, secret: text)
        defer { request.wipeSecrets() }
        guard case .importSummary(let added, let replaced, let unchanged) = try send(request, what: "import") else {
            throw .failure(what: "import", why: "unexpected reply from arcad")
        }
        output.line("added \(added), replaced \(replaced), unchanged \(unchanged)")
    }
}
