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
            "backup_staging_bytes = 1048576\nbackup_staging_total_bytes = 4294967296\n"
                + "backup_staging_idle_seconds = 86400")
        #expect(set.backupStagingBytes == 1 << 20)
        #expect(set.backupStagingTotalBytes == 4 << 30)
        #expect(set.backupStagingIdleSeconds == 86_400)
    }

    @Test(
        "a bad value is refused with the line and the key",
        arguments: [
            (
                "backup_staging_bytes = 1048575",
                "backup_staging_bytes must be a whole number in 1048576...4294967296, got '1048575'"
            ),
            (
                "backup_staging_bytes = 256M",
                "backup_staging_bytes must be a whole number in 1048576...4294967296, got '256M'"
            ),
            (
                "backup_staging_total_bytes = -1",
                "backup_staging_total_bytes must be a whole number in 1048576...4294967296, got '-1'"
            ),
            (
                "backup_staging_total_bytes = 4294967297",
                "backup_staging_total_bytes must be a whole number in 1048576...4294967296, got '4294967297'"
            ),
            (
                "backup_staging_bytes = 1099511627776",
                "backup_staging_bytes must be a whole number in 1048576...4294967296, got '1099511627776'"
            ),
            (
                "backup_staging_idle_seconds = 0",
                "backup_staging_idle_seconds must be a whole number in 1...86400, got '0'"
            ),
            (
                "backup_staging_idle_seconds = ten",
                "backup_staging_idle_seconds must be a whole number in 1...86400, got 'ten'"
            ),
        ])
    func badValue(line: String, message: String) {
        #expect(throws: ConfigError(location: "t.conf:2", message: message)) {
            try DaemonConfig.parse("# caps\n" + line, file: "t.conf")
        }
    }

    @Test("a per-user cap above the total is refused when both are set, naming both keys")
    func perUserAboveTotal() {
        #expect(
            throws: ConfigError(
                location: "t.conf",
                message: "backup_staging_bytes (4194304) must not be more than backup_staging_total_bytes (2097152)")
        ) {
            try DaemonConfig.parse(
                "backup_staging_bytes = 4194304\nbackup_staging_total_bytes = 2097152", file: "t.conf")
        }
    }

    @Test("one key set alone moves the other's default with it")
    func oneKeyAlone() throws {
        let total = try DaemonConfig.parse("backup_staging_total_bytes = 134217728")
        #expect(total.backupStagingTotalBytes == 128 << 20)
        #expect(total.backupStagingBytes == 128 << 20)  // the 256 MiB default, clamped
        let perUser = try DaemonConfig.parse("backup_staging_bytes = 1073741824")
        #expect(perUser.backupStagingBytes == 1 << 30)
        #expect(perUser.backupStagingTotalBytes == 1 << 30)  // the 512 MiB default, raised
        let small = try DaemonConfig.parse("backup_staging_bytes = 2097152")
        #expect(small.backupStagingBytes == 2 << 20)
        #expect(small.backupStagingTotalBytes == 512 << 20)
    }

    @Test("a total above half of the machine's memory stops arcad with a clear error")
    func aboveHalfTheMemory() throws {
        let config = try DaemonConfig.parse("backup_staging_total_bytes = 4294967296")
        #expect(
            throws: ConfigError(
                location: "t.conf",
                message: "backup_staging_total_bytes (4294967296) is more than half of this machine's memory "
                    + "(8589934590 bytes); lower it (and backup_staging_bytes)")
        ) { try config.checkBackupStaging(physicalMemory: 8_589_934_590, file: "t.conf") }
        try config.checkBackupStaging(physicalMemory: 8 << 30, file: "t.conf")
        try DaemonConfig().checkBackupStaging(physicalMemory: 1 << 30)
        #expect(throws: ConfigError.self) { try DaemonConfig().checkBackupStaging(physicalMemory: (1 << 30) - 2) }
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
                == .error(
                    status: .param, message: "the backup is 2097153 bytes; arcad stages at most 2097152 bytes per user")
        )
        #expect(stage(60_241, total: 2 << 20, connection: 300) == .backupReceived(length: UInt64(piece.count)))
        // The total: 2 MiB reserved, another 2 MiB would pass 3 MiB (printed exactly, not in
        // MiB rounded down; before, the message said the cap was held).
        #expect(
            stage(60_242, total: 2 << 20, connection: 301)
                == .error(
                    status: .notAvailable,
                    message: "arcad stages 2097152 bytes of other users' backups; 2097152 more would pass its cap "
                        + "of 3145728 bytes; try again later"))
        #expect(t.daemon.staging.reservedBytes == 2 << 20)
        for connection: UInt64 in [300, 301] {
            var peer = PeerCredentials(pid: 1, uid: 0, gid: 0)
            peer.connection = connection
            t.daemon.connectionClosed(peer)
        }
        #expect(t.daemon.staging.reservedBytes == 0)
    }

    @Test("a declared length is not allocated up front: a 4 GiB staging holds only what arrived")
    func noUpFrontAllocation() throws {
        let staging = BackupStaging(perUserLimit: 4 << 30, totalLimit: 4 << 30)
        let piece = [UInt8](repeating: 0x33, count: 1000)
        #expect(try staging.stageImport(uid: 60_243, connection: 1, total: 4 << 30, offset: 0, chunk: piece) == 1000)
        #expect(try staging.stageImport(uid: 60_243, connection: 1, total: 4 << 30, offset: 1000, chunk: piece) == 2000)
        #expect(staging.reservedBytes == 4 << 30)  // the cap counts the declared length
        // Memory: what arrived, at least 1 MiB (malloc may round up by less than a few pages).
        #expect(((1 << 20)..<(1 << 20) + 16_384).contains(staging.heldCapacity(uid: 60_243) ?? 0))
        staging.drop(connection: 1)
        // A small import ends with capacity exactly its length, not doubled past it.
        let whole = [UInt8](repeating: 0x44, count: 3 << 20)
        var offset = 0
        while offset < whole.count {
            let end = min(whole.count, offset + ProtocolLimits.maximumBackupChunkLength)
            _ = try staging.stageImport(
                uid: 60_244, connection: 2, total: UInt64(whole.count), offset: UInt64(offset),
                chunk: Array(whole[offset..<end]))
            offset = end
        }
        #expect(((3 << 20)..<(3 << 20) + 16_384).contains(staging.heldCapacity(uid: 60_244) ?? 0))
        #expect(try staging.takeImport(uid: 60_244, connection: 2) == whole)
    }
}
