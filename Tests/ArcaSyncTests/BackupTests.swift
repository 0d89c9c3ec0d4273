import ArcaCrypto
import Testing

@testable import ArcaSync

@Suite struct BackupTests {
    let recovery = Fixture.secret(0x42)
    let bodies = [Fixture.body("svc=mail", "one"), Fixture.body("svc=bank", "two"), Fixture.body("note", nil)]

    @Test func aRecoveryKeyBackupRoundTrips() throws {
        let bytes = try Backup.write(bodies, to: .recoveryKey(recovery), clock: ManualClock(5000))
        let restored = try Backup.read(bytes, with: .recoveryKey(recovery))
        #expect(restored.map { String(decoding: $0.attributes, as: UTF8.self) } == ["svc=mail", "svc=bank", "note"])
        #expect(restored.map { Fixture.text($0.secret) } == ["one", "two", nil])
        for needle in ["svc=mail", "one", "bank"] {
            let n = Array(needle.utf8)
            #expect(!(0...(bytes.count - n.count)).contains { Array(bytes[$0..<$0 + n.count]) == n })
        }
    }

    @Test func aWrongKeyOrTheWrongKindOfSecretDoesNotOpen() throws {
        let bytes = try Backup.write(bodies, to: .recoveryKey(recovery), clock: ManualClock(5000))
        #expect(throws: SyncError.backupUnreadable) {
            _ = try Backup.read(bytes, with: .recoveryKey(Fixture.secret(0x43)))
        }
        #expect(throws: SyncError.malformed("backup is sealed to the recovery key")) {
            _ = try Backup.read(bytes, with: .passphrase(Fixture.secret(0x42)))
        }
    }

    @Test func aPassphraseBackupRoundTrips() throws {
        let parameters = KDFParameters(opsLimit: 1, memoryLimit: 1 << 16, salt: [UInt8](repeating: 7, count: 16))
        let pass = Fixture.secret(0x61, count: 12)
        let bytes = try Backup.write(bodies, to: .passphrase(pass, parameters), clock: ManualClock(5000))
        #expect(try Backup.read(bytes, with: .passphrase(pass)).count == 3)
        #expect(throws: SyncError.backupUnreadable) {
            _ = try Backup.read(bytes, with: .passphrase(Fixture.secret(0x62, count: 12)))
        }
    }

    /// Attack: any byte of the file flipped, or the file cut short, is refused.
    @Test func anAlteredOrTruncatedBackupIsRefused() throws {
        let bytes = try Backup.write(Array(bodies.prefix(1)), to: .recoveryKey(recovery), clock: ManualClock(5000))
        for i in bytes.indices {
            var b = bytes
            b[i] ^= 0x01
            #expect(throws: SyncError.self) { _ = try Backup.read(b, with: .recoveryKey(recovery)) }
        }
        for n in [0, 5, bytes.count / 2, bytes.count - 1] {
            #expect(throws: SyncError.self) {
                _ = try Backup.read(Array(bytes.prefix(n)), with: .recoveryKey(recovery))
            }
        }
    }
}
