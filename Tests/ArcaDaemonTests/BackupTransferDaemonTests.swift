import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// Backups in chunks through arcad's staging (`arca export`/`import` past one 2 MiB frame), with
/// real SQLite vaults: the round trip, and every attack on a staging slot performed for real.
@Suite("arcad backup transfer in chunks (root)", .serialized)
struct BackupTransferDaemonTests {
    let alice: UInt32 = 60_181
    let mallory: UInt32 = 60_182
    static let pass = Array("a long backup passphrase".utf8)
    static let chunk = ProtocolLimits.maximumBackupChunkLength

    /// `request` from `uid` on connection `connection` (the server numbers them from 1).
    func send(_ t: TestDaemon, _ request: Request, as uid: UInt32, on connection: UInt64) -> Reply {
        var request = request
        var peer = PeerCredentials(pid: 1, uid: uid, gid: uid)
        peer.connection = connection
        return t.daemon.handle(&request, from: peer)
    }

    func status(_ reply: Reply) -> Int32? {
        if case .error(let status, _) = reply { return status.rawValue }
        return nil
    }

    func message(_ reply: Reply) -> String? {
        if case .error(_, let message) = reply { return message }
        return nil
    }

    /// `count` items with 2 KiB random secrets: a backup of about 3 KiB per item.
    func fill(_ t: TestDaemon, _ uid: UInt32, count: Int) {
        for i in 0..<count {
            let secret = String(decoding: SecureRandom.bytes(count: 2048).map { 0x41 + $0 % 26 }, as: UTF8.self)
            #expect(t.send(addRequest(uid, "svc\(i)", "acct", secret), as: uid) == .items([]))
        }
    }

    /// Every generic password of `uid`, attributes and secret, in service order.
    func items(_ t: TestDaemon, _ uid: UInt32, count: Int) -> [ResultItem] {
        (0..<count).compactMap { i in
            let query = Query(
                itemClass: .genericPassword, attributes: [.service: .string("svc\(i)")],
                returnFlags: [.data, .attributes])
            guard case .items(let found) = t.send(.copyMatching(vault: .user(uid: uid), query: query), as: uid) else {
                return nil
            }
            return found.first
        }
    }

    /// Reads the export staged on `connection`, chunk by chunk.
    func pull(_ t: TestDaemon, _ uid: UInt32, on connection: UInt64, length: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        while UInt64(out.count) < length {
            guard
                case .backupChunk(let piece) = send(
                    t, .readExport(uid: uid, offset: UInt64(out.count)), as: uid, on: connection), !piece.isEmpty
            else {
                Issue.record("export read stopped at \(out.count)")
                return out
            }
            #expect(piece.count <= Self.chunk)
            out += piece
        }
        return out
    }

    /// Stages `bytes` for import on `connection`.
    func push(_ t: TestDaemon, _ uid: UInt32, on connection: UInt64, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + Self.chunk)
            let reply = send(
                t,
                .stageImport(
                    uid: uid, total: UInt64(bytes.count), offset: UInt64(offset), chunk: Array(bytes[offset..<end])),
                as: uid, on: connection)
            #expect(reply == .backupReceived(length: UInt64(end)))
            offset = end
        }
    }

    @Test("a backup over one frame (1,000 items of 2 KiB) goes out and back in chunks; re-import changes nothing")
    func roundTripPastOneFrame() throws {
        let source = try TestDaemon()
        defer { source.cleanUp() }
        _ = try enrolled(source, alice)
        fill(source, alice, count: 1000)
        // The single-frame request still refuses it, with a clear error.
        let single = source.send(.exportItems(uid: alice, secret: Self.pass, passphrase: true), as: alice)
        #expect(status(single) == -50)
        #expect(message(single)?.contains("one request carries at most 2088880: export in chunks") == true, "\(single)")
        guard
            case .backupStaged(let length) = send(
                source, .stageExport(uid: alice, secret: Self.pass, passphrase: true), as: alice, on: 7)
        else {
            Issue.record("no staged export")
            return
        }
        #expect(length > UInt64(ProtocolLimits.maximumFrameLength))
        #expect(source.daemon.staging.reservedBytes == Int(length))
        let backup = pull(source, alice, on: 7, length: length)
        #expect(UInt64(backup.count) == length)
        // The last piece dropped the staging.
        #expect(source.daemon.staging.reservedBytes == 0)
        #expect(status(send(source, .readExport(uid: alice, offset: length), as: alice, on: 7)) == -50)

        let target = try TestDaemon()
        defer { target.cleanUp() }
        _ = try enrolled(target, alice, "another password")
        push(target, alice, on: 3, backup)
        #expect(
            send(target, .importStaged(uid: alice, secret: Self.pass), as: alice, on: 3)
                == .importSummary(added: 1000, replaced: 0, unchanged: 0))
        #expect(target.daemon.staging.reservedBytes == 0)
        let expected = items(source, alice, count: 1000)
        #expect(expected.count == 1000)
        #expect(items(target, alice, count: 1000) == expected)
        push(target, alice, on: 4, backup)
        #expect(
            send(target, .importStaged(uid: alice, secret: Self.pass), as: alice, on: 4)
                == .importSummary(added: 0, replaced: 0, unchanged: 1000))
        #expect(items(target, alice, count: 1000) == expected)
    }

    @Test("attack: another uid, and another connection of the same uid, can neither read nor feed a staging")
    func anotherPeerCannotTouchAStaging() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        _ = try enrolled(t, mallory, "mallory")
        fill(t, alice, count: 3)
        guard
            case .backupStaged(let length) = send(
                t, .stageExport(uid: alice, secret: Self.pass, passphrase: true), as: alice, on: 1)
        else {
            Issue.record("no staged export")
            return
        }
        // Another user naming alice: not allowed, whatever the connection.
        #expect(status(send(t, .readExport(uid: alice, offset: 0), as: mallory, on: 1)) == -34018)
        #expect(
            status(send(t, .stageImport(uid: alice, total: 9, offset: 0, chunk: [1]), as: mallory, on: 1)) == -34018)
        #expect(status(send(t, .importStaged(uid: alice, secret: Self.pass), as: mallory, on: 1)) == -34018)
        // Mallory's own uid has no staging: alice's is not reachable through it either.
        #expect(
            message(send(t, .readExport(uid: mallory, offset: 0), as: mallory, on: 1))
                == "no backup export staged on this connection")
        // Alice's (or root's) other connection: cannot read it, start another, or feed one.
        #expect(
            message(send(t, .readExport(uid: alice, offset: 0), as: alice, on: 2))
                == "no backup export staged on this connection")
        let busy = send(t, .stageImport(uid: alice, total: 9, offset: 0, chunk: [1]), as: 0, on: 2)
        #expect(status(busy) == -25291)
        #expect(
            message(busy)
                == "another connection is exporting or importing a backup of this vault; try again later")
        #expect(
            status(send(t, .stageExport(uid: alice, secret: Self.pass, passphrase: true), as: alice, on: 2)) == -25291)
        #expect(
            message(send(t, .stageImport(uid: alice, total: 9, offset: 1, chunk: [1]), as: alice, on: 2))
                == "no backup import staged on this connection")
        // The owner still reads it whole; then the connection's close leaves nothing.
        #expect(pull(t, alice, on: 1, length: length).count == Int(length))
        push(t, alice, on: 1, [1, 2, 3])
        #expect(t.daemon.staging.reservedBytes == 3)
        t.daemon.connectionClosed(
            {
                var p = PeerCredentials(pid: 1, uid: alice, gid: alice)
                p.connection = 1
                return p
            }())
        #expect(t.daemon.staging.reservedBytes == 0)
        #expect(
            message(send(t, .importStaged(uid: alice, secret: Self.pass), as: alice, on: 1))
                == "no backup import staged on this connection")
    }

    @Test("attack: out-of-order, overlapping, repeated and oversized pieces are refused; nothing is merged early")
    func piecesOutOfOrder() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let a = alice
        #expect(
            send(t, .stageImport(uid: a, total: 10, offset: 0, chunk: [0, 1, 2, 3]), as: a, on: 1)
                == .backupReceived(length: 4))
        // A gap, an overlap, the same piece again, another total.
        #expect(
            message(send(t, .stageImport(uid: a, total: 10, offset: 6, chunk: [6]), as: a, on: 1))
                == "backup chunk at offset 6 refused: the next one starts at 4")
        #expect(
            message(send(t, .stageImport(uid: a, total: 10, offset: 2, chunk: [2, 3, 4]), as: a, on: 1))
                == "backup chunk at offset 2 refused: the next one starts at 4")
        #expect(
            message(send(t, .stageImport(uid: a, total: 10, offset: 3, chunk: [3]), as: a, on: 1))
                == "backup chunk at offset 3 refused: the next one starts at 4")
        #expect(
            message(send(t, .stageImport(uid: a, total: 11, offset: 4, chunk: [4]), as: a, on: 1))
                == "backup chunk for 11 bytes refused: this import declared 10")
        // Finishing early is refused and keeps what arrived, so the rest may follow.
        let early = send(t, .importStaged(uid: a, secret: Self.pass), as: a, on: 1)
        #expect(status(early) == -50)
        #expect(message(early) == "the backup is incomplete: 4 of 10 bytes arrived")
        #expect(
            send(t, .stageImport(uid: a, total: 10, offset: 4, chunk: [4, 5]), as: a, on: 1)
                == .backupReceived(length: 6))
        // Bigger than the per-user cap: refused before anything is kept.
        let huge = send(t, .stageImport(uid: a, total: 256 << 20 + 1, offset: 0, chunk: [1]), as: a, on: 1)
        #expect(message(huge) == "the backup is 268435457 bytes; arcad stages at most 268435456 bytes per user")
        #expect(status(huge) == -50)
        #expect(t.daemon.staging.reservedBytes == 10)
    }

    @Test("attack: a flood of stagings past the caps is refused and arcad reserves no more than the caps")
    func floodPastTheCaps() throws {
        var config = DaemonConfig()
        config.backupStagingBytes = 4 << 20
        config.backupStagingTotalBytes = 10 << 20
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        let piece = [UInt8](repeating: 0x5A, count: Self.chunk)
        // Root stages for many uids at once (each its own connection): the third 4 MiB staging
        // would pass the 10 MiB total.
        for (index, uid) in [alice, alice + 10, alice + 11].enumerated() {
            let reply = send(
                t, .stageImport(uid: uid, total: 4 << 20, offset: 0, chunk: piece), as: 0, on: 100 + UInt64(index))
            if index < 2 {
                #expect(reply == .backupReceived(length: UInt64(Self.chunk)))
            } else {
                #expect(status(reply) == -25291)
                #expect(
                    message(reply)
                        == "arcad stages 8388608 bytes of other users' backups; 4194304 more would pass its cap of 10485760 bytes; try again later"
                )
            }
        }
        #expect(t.daemon.staging.reservedBytes == 8 << 20)
        // One uid past its own cap.
        let over = send(t, .stageImport(uid: alice + 12, total: 4 << 20 + 1, offset: 0, chunk: piece), as: 0, on: 200)
        #expect(message(over) == "the backup is 4194305 bytes; arcad stages at most 4194304 bytes per user")
        // A staging fed to the end can take no byte more (the codec refuses a piece past the end,
        // and the staging checks again).
        for k in 1..<4 {
            _ = send(
                t, .stageImport(uid: alice, total: 4 << 20, offset: UInt64(k * Self.chunk), chunk: piece), as: 0,
                on: 100)
        }
        #expect(
            (try? t.daemon.staging.stageImport(uid: alice, connection: 100, total: 4 << 20, offset: 4 << 20, chunk: [1]))
                == nil)
        #expect(t.daemon.staging.reservedBytes == 8 << 20)
        for c in [UInt64(100), 101] {
            t.daemon.connectionClosed(
                {
                    var p = PeerCredentials(pid: 1, uid: 0, gid: 0)
                    p.connection = c
                    return p
                }())
        }
        #expect(t.daemon.staging.reservedBytes == 0)
    }

    @Test("a truncated, altered or wrongly opened backup in chunks: exact error, vault unchanged")
    func damagedBackups() throws {
        let source = try TestDaemon()
        defer { source.cleanUp() }
        let key = try enrolled(source, alice)
        fill(source, alice, count: 800)
        guard case .recoveryKey(let recovery) = source.send(.rotateRecoveryKey(uid: alice, key: key), as: alice),
            case .backupStaged(let length) = send(
                source, .stageExport(uid: alice, secret: recovery, passphrase: false), as: alice, on: 1)
        else {
            Issue.record("no staged export")
            return
        }
        let backup = pull(source, alice, on: 1, length: length)
        let target = try TestDaemon()
        defer { target.cleanUp() }
        let targetKey = try enrolled(target, alice, "another password")
        guard
            case .recoveryKey(let otherRecovery) = target.send(
                .rotateRecoveryKey(uid: alice, key: targetKey), as: alice)
        else {
            Issue.record("no recovery key")
            return
        }
        var flipped = backup
        flipped[backup.count / 2] ^= 0x01
        let cases: [([UInt8], [UInt8], Int32, String)] = [
            (Array(backup.prefix(backup.count / 2)), recovery, -26275, "malformed sync data: truncated record"),
            (flipped, recovery, -26275, ""),
            (backup, otherRecovery, -25293, "backup does not open: wrong key or passphrase, or the file was altered"),
        ]
        for (index, (bytes, secret, code, text)) in cases.enumerated() {
            push(target, alice, on: UInt64(10 + index), bytes)
            let reply = send(target, .importStaged(uid: alice, secret: secret), as: alice, on: UInt64(10 + index))
            #expect(status(reply) == code, "case \(index): \(reply)")
            if !text.isEmpty { #expect(message(reply) == text, "case \(index)") }
            #expect(items(target, alice, count: 800).isEmpty)
            #expect(target.daemon.staging.reservedBytes == 0)
        }
        push(target, alice, on: 20, backup)
        #expect(
            send(target, .importStaged(uid: alice, secret: recovery), as: alice, on: 20)
                == .importSummary(added: 800, replaced: 0, unchanged: 0))
    }
}
