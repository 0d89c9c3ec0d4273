import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// Sync layer 3: arcad's per-user sync identity in its own state directory (issue 17).
@Suite("arcad sync state (root)", .serialized)
struct SyncStateDaemonTests {
    let alice: UInt32 = 60_181

    /// The identity arcad loads for alice from its state directory.
    func identity(_ t: TestDaemon) throws -> SyncIdentity? {
        try t.daemon.context(alice).withLock { state throws(HandlerError) -> SyncIdentity? in
            guard let vault = state.vault else { throw HandlerError.noVault }
            return try t.daemon.syncIdentity(uid: alice, vault: vault)
        }
    }

    func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("sync init makes a device key and epoch key in arcad's state dir, 0600 root, sealed to the vault")
    func initCreatesASealedIdentity() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        guard case .syncDevice(let id) = t.send(.syncInit(uid: alice), as: alice) else {
            Issue.record("no device id")
            return
        }
        #expect(id.count == 32)
        let file = SyncIdentityStore.path(t.directory, uid: alice)
        #expect(try mode(t.directory + "/sync") == 0o700)
        #expect(try mode(file) == 0o600)
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.ownerAccountID] as? Int) == 0)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(bytes.count == SyncIdentityStore.fileLength)
        // The same identity comes back (a restart keeps the device); the seed is not in clear.
        let loaded = try identity(t)
        #expect(loaded?.signer.publicKey == id)
        #expect(loaded?.epoch == 0)
        let seed = try #require(try loaded?.signer.seed()).withUnsafeBytes { Array($0) }
        #expect(Data(bytes).range(of: Data(seed)) == nil)
        // Never replaced: a second init would orphan the circle.
        #expect(statusCode(t.send(.syncInit(uid: alice), as: alice)) == -25299)
        // Another vault's key does not open it: decode, not a silent new identity.
        var other = bytes
        other[other.count - 1] ^= 1
        try Data(other).write(to: URL(fileURLWithPath: file))
        #expect(
            throws: HandlerError(.decode, "\(file) does not open with this vault's key (damaged or not this vault's)")
        ) {
            _ = try identity(t)
        }
    }

    @Test("sync init while the afterFirstUnlock class is locked: -25308, nothing written")
    func lockedRefuses() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        #expect(t.send(.lock(uid: alice, classes: .all), as: alice) == .ok)
        #expect(statusCode(t.send(.syncInit(uid: alice), as: alice)) == -25308)
        #expect(!FileManager.default.fileExists(atPath: SyncIdentityStore.path(t.directory, uid: alice)))
    }

    /// Attack: another user asks arcad to set up (and so own the device key of) alice's sync.
    @Test("another user cannot init someone's sync: -34018, nothing written")
    func otherUsers() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        #expect(statusCode(t.send(.syncInit(uid: alice), as: alice + 1)) == -34018)
        #expect(!FileManager.default.fileExists(atPath: SyncIdentityStore.path(t.directory, uid: alice)))
    }
}
