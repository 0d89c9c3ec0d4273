import ArcaProtocol
import Testing

@testable import ArcaDaemon

/// The backup staging caps in arca.conf (issue 17's edge cases): `backup_staging_bytes`,
/// `backup_staging_total_bytes`, `backup_staging_idle_seconds`; before, only the code's
/// defaults (256 MiB, 512 MiB, 600 s) existed and the keys were refused as unknown.
@Suite("arca.conf backup staging caps", .serialized)
struct ConfigBackupStagingTests {
    @Test("defaults 256 MiB / 512 MiB / 600 s, and values within range")
    func values() throws {
        let defaults = try DaemonConfig.parse("")
        #expect(defaults.backupStagingBytes == 268_435_456)
        #expect(defaults.backupStagingTotalBytes == 536_870_912)
        #expect(defaults.backupStagingIdleSeconds == 600)
        let set = try DaemonConfig.parse(
            "backup_staging_bytes = 1048576\nbackup_staging_total_bytes = 1099511627776\n"
                + "backup_staging_idle_seconds = 86400")
        #expect(set.backupStagingBytes == 1 << 20)
        #expect(set.backupStagingTotalBytes == 1 << 40)
        #expect(set.backupStagingIdleSeconds == 86_400)
    }

    @Test(
        "a bad value is refused with the line and the key",
        arguments: [
            ("backup_staging_bytes = 1048575", "backup_staging_bytes must be a whole number in 1048576...1099511627776, got '1048575'"),
            ("backup_staging_bytes = 256M", "backup_staging_bytes must be a whole number in 1048576...1099511627776, got '256M'"),
            ("backup_staging_total_bytes = -1", "backup_staging_total_bytes must be a whole number in 1048576...1099511627776, got '-1'"),
            ("backup_staging_total_bytes = 1099511627777", "backup_staging_total_bytes must be a whole number in 1048576...1099511627776, got '1099511627777'"),
            ("backup_staging_idle_seconds = 0", "backup_staging_idle_seconds must be a whole number in 1...86400, got '0'"),
            ("backup_staging_idle_seconds = ten", "backup_staging_idle_seconds must be a whole number in 1...86400, got 'ten'"),
        ])
    func badValue(line: String, message: String) {
        #expect(throws: ConfigError(location: "t.conf:2", message: message)) {
            try DaemonConfig.parse("# caps\n" + line, file: "t.conf")
        }
    }

    @Test("a per-user cap above the total is refused, naming both keys")
    func perUserAboveTotal() {
        #expect(
            throws: ConfigError(
                location: "t.conf",
                message: "backup_staging_bytes (4194304) must not be more than backup_staging_total_bytes (2097152)")
        ) { try DaemonConfig.parse("backup_staging_bytes = 4194304\nbackup_staging_total_bytes = 2097152", file: "t.conf") }
        #expect(
            throws: ConfigError(
                location: "t.conf",
                message: "backup_staging_bytes (268435456) must not be more than backup_staging_total_bytes (134217728)")
        ) { try DaemonConfig.parse("backup_staging_total_bytes = 134217728", file: "t.conf") }
    }

    @Test("the configured caps are the ones arcad applies (root: a real daemon, real stagings)")
    func capsApplied() throws {
        let config = try DaemonConfig.parse(
            "backup_staging_bytes = 2097152\nbackup_staging_total_bytes = 3145728\nbackup_staging_idle_seconds = 5")
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        #expect(t.daemon.staging.perUserLimit == 2 << 20)
        #expect(t.daemon.staging.idleSeconds == 5)
        let piece = [UInt8](repeating: 0x5A, count: ProtocolLimits.maximumBackupChunkLength)
        func stage(_ uid: UInt32, total: UInt64, connection: UInt64) -> Reply {
            var request = Request.stageImport(uid: uid, total: total, offset: 0, chunk: piece)
            var peer = PeerCredentials(pid: 1, uid: 0, gid: 0)
            peer.connection = connection
            return t.daemon.handle(&request, from: peer)
        }
        // One byte past the per-user cap, then exactly at it.
        #expect(
            stage(60_241, total: 2 << 20 + 1, connection: 300)
                == .error(status: .param, message: "the backup is 2097153 bytes; arcad stages at most 2 MiB per user"))
        #expect(stage(60_241, total: 2 << 20, connection: 300) == .backupReceived(length: UInt64(piece.count)))
        // The total: 2 MiB reserved, another 2 MiB would pass 3 MiB.
        #expect(
            stage(60_242, total: 2 << 20, connection: 301)
                == .error(
                    status: .notAvailable, message: "arcad holds 3 MiB of other users' backups already; try again later"))
        #expect(t.daemon.staging.reservedBytes == 2 << 20)
        for connection: UInt64 in [300, 301] {
            var peer = PeerCredentials(pid: 1, uid: 0, gid: 0)
            peer.connection = connection
            t.daemon.connectionClosed(peer)
        }
        #expect(t.daemon.staging.reservedBytes == 0)
    }
}
