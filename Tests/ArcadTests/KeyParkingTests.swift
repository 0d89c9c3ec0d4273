import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The keys arcad parks in root's `@u` across a restart: after the first park of a
/// uid, each lock change replaces the payload of the same key (`keyctl_update`, one
/// call, the old payload zeroed by the kernel) instead of staging a new key and
/// invalidating the old one; a key someone else invalidated is parked anew; lock --all
/// drops what is parked.
@Suite("arcad binary: parked keys updated in place (root, real kernel)", .serialized)
struct KeyParkingTests {
    func purge(_ user: TestUser) { _ = KeyringLayout().purge(user: user.uid) }

    /// The description of the ring `arcad` parks in (its state directory's tag).
    func parkingRing(_ arcad: ArcadProcess) throws -> String {
        let digest = try KeyedHash.blake2b(Array(arcad.stateDirectory.utf8), outputLength: 16)
        return "arcad:parked:" + digest.prefix(6).map { String(format: "%02x", $0) }.joined()
    }

    /// The serial of the key `arcad` parked for `uid`, found as root.
    func parkedKey(_ arcad: ArcadProcess, _ uid: UInt32) throws -> KeySerial {
        let search = try run(["keyctl", "search", "@u", "user", "\(try parkingRing(arcad)):\(uid)"])
        return KeySerial(rawValue: try #require(Int32(search.stdout), "no parked key: \(search.stderr)"))
    }

    /// The ring arcad parks in, found in root's `@u`; nil if there is none.
    func ringOf(_ arcad: ArcadProcess) throws -> KeySerial? {
        let search = try run(["keyctl", "search", "@u", "keyring", try parkingRing(arcad)])
        return Int32(search.stdout).map(KeySerial.init(rawValue:))
    }

    /// arcad with a throwaway user enrolled: both classes held and parked.
    func withEnrolledUser(_ body: (ArcadProcess, TestUser) throws -> Void) throws {
        try withThrowawayUsers(1, prefix: "perf16p", cleanup: purge) { users in
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(
                try arcad.send(.enroll(uid: users[0].uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            try body(arcad, users[0])
        }
    }

    func payload(_ key: KeySerial) throws -> [UInt8] { try key.read().withUnsafeBytes { Array($0) } }

    func unlocked(_ arcad: ArcadProcess, _ uid: UInt32) throws -> LockClasses? {
        guard case .status(let status) = try arcad.send(.status(uid: uid)) else { return nil }
        return status.unlocked
    }

    /// arcad with a throwaway user enrolled (both classes held and parked), and the serial
    /// of the key parked for them; afterwards, whenUnlocked is locked and arcad restarted.
    func afterOneLock(
        _ between: (ArcadProcess, TestUser, KeySerial) throws -> Void,
        _ check: (ArcadProcess, TestUser, KeySerial) throws -> Void
    ) throws {
        try withEnrolledUser { arcad, alice in
            let first = try parkedKey(arcad, alice.uid)
            try between(arcad, alice, first)
            #expect(try arcad.send(.lock(uid: alice.uid, classes: .whenUnlocked)) == .ok)
            try check(arcad, alice, first)
            // What is parked now brings back exactly afterFirstUnlock.
            arcad.kill9()
            try arcad.start()
            #expect(try unlocked(arcad, alice.uid) == .afterFirstUnlock)
        }
    }

    @Test("a lock change re-parks in place: the same key, a new payload, still owner-only; a restart restores it")
    func lockChangeUpdatesInPlace() throws {
        var both: [UInt8] = []
        try afterOneLock({ _, _, first in both = try payload(first) }) { arcad, alice, first in
            let second = try parkedKey(arcad, alice.uid)
            #expect(second == first, "a new key was staged and the old one invalidated")
            #expect(try payload(second) != both)
            #expect(try second.describe().permissions == 0x003f_0000)
        }
    }

    @Test("a parked key invalidated behind arcad's back: the next change parks a new key; a restart restores it")
    func invalidatedKeyIsParkedAnew() throws {
        try afterOneLock({ _, _, first in try first.invalidate() }) { arcad, alice, first in
            let second = try parkedKey(arcad, alice.uid)
            #expect(second != first)
            #expect(try second.describe().permissions == 0x003f_0000)
        }
    }

    @Test("lock --all drops the parked key (the serial arcad parked) and the emptied ring; a restart restores nothing")
    func lockAllDropsTheParkedKey() throws {
        try withEnrolledUser { arcad, alice in
            let parked = try parkedKey(arcad, alice.uid)
            let ring = try #require(try ringOf(arcad), "no parked ring")
            #expect(try arcad.send(.lockAll) == .ok)
            #expect(throws: KeyringErrno.self, "the parked key survived lock --all") { try parked.describe() }
            #expect(throws: KeyringErrno.self, "the emptied ring stayed in root's @u") { try ring.describe() }
            #expect(try ringOf(arcad) == nil)
            arcad.kill9()
            try arcad.start()
            #expect(try unlocked(arcad, alice.uid) == [])
        }
    }
}
