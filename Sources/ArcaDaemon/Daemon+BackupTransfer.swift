import ArcaCrypto
import ArcaProtocol

/// `arca export` / `arca import` of a backup of any size: the bytes move in chunks of at most
/// 1 MiB through arcad's staging (``BackupStaging``), on the one connection that started them.
/// Sealing and merging are the single-frame requests' own (`sealBackup`, `importItems`).
extension Daemon {
    func stageExport(uid: UInt32, secret: SecretBytes, passphrase: Bool, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        // Another connection's staging is refused before any sealing is paid for.
        do { try staging.checkRoom(uid: uid, connection: peer.connection, length: 0) } catch {
            throw Self.stagingError(error)
        }
        var bytes = try sealBackup(uid: uid, secret: secret, passphrase: passphrase, peer: peer)
        let length = UInt64(bytes.count)
        do { try staging.stageExport(&bytes, uid: uid, connection: peer.connection) } catch {
            throw Self.stagingError(error)
        }
        return .backupStaged(length: length)
    }

    func readExport(uid: UInt32, offset: UInt64, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        do { return .backupChunk(try staging.readExport(uid: uid, connection: peer.connection, offset: offset)) } catch
        {
            throw Self.stagingError(error)
        }
    }

    func stageImport(uid: UInt32, total: UInt64, offset: UInt64, chunk: [UInt8], peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        do {
            let received = try staging.stageImport(
                uid: uid, connection: peer.connection, total: total, offset: offset, chunk: chunk)
            return .backupReceived(length: received)
        } catch {
            throw Self.stagingError(error)
        }
    }

    func importStaged(uid: UInt32, secret: SecretBytes, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        var backup: [UInt8]
        do { backup = try staging.takeImport(uid: uid, connection: peer.connection) } catch {
            throw Self.stagingError(error)
        }
        defer { SecureWipe.zero(&backup) }
        return try importItems(uid: uid, backup: backup, secret: secret, peer: peer)
    }

    /// A closed connection's staged backup goes at once (zeroed).
    public func connectionClosed(_ peer: PeerCredentials) {
        staging.drop(connection: peer.connection)
    }

    /// The one mapping from staging refusals to replies.
    static func stagingError(_ refusal: BackupStaging.Refusal) -> HandlerError {
        switch refusal {
        case .busy:
            return HandlerError(
                .notAvailable, "another connection is exporting or importing a backup of this vault; try again later")
        case .tooLarge(let length, let limit):
            return .param("the backup is \(length) bytes; arcad stages at most \(limit) bytes per user")
        case .full(let held, let length, let limit):
            return HandlerError(
                .notAvailable,
                "arcad stages \(held) bytes of other users' backups; \(length) more would pass its cap of "
                    + "\(limit) bytes; try again later")
        case .nothingStaged(let direction):
            return .param("no backup \(direction == .export ? "export" : "import") staged on this connection")
        case .outOfOrder(let expected, let got):
            return .param("backup chunk at offset \(got) refused: the next one starts at \(expected)")
        case .totalChanged(let declared, let got):
            return .param("backup chunk for \(got) bytes refused: this import declared \(declared)")
        case .incomplete(let received, let total):
            return .param("the backup is incomplete: \(received) of \(total) bytes arrived")
        }
    }
}
