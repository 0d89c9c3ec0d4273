import ArcaCrypto
import ArcaProtocol
import ArcaVault
import Foundation
import Testing

@testable import ArcaDaemon

/// `arca export` / `arca import` through arcad's request logic, with real SQLite vaults.
@Suite("arcad backup export and import (root)", .serialized)
struct SyncBackupDaemonTests {
    let alice: UInt32 = 60_171

    /// Every item of a vault, both classes, any synchronizable, with attributes and data, sorted.
    func everything(_ t: TestDaemon, _ uid: UInt32) -> [ResultItem] {
        var out: [ResultItem] = []
        for itemClass in [ArcaProtocol.ItemClass.genericPassword, .internetPassword] {
            let query = Query(
                itemClass: itemClass, attributes: [.synchronizable: .bool(true)], matchLimit: .all,
                returnFlags: [.data, .attributes])
            for sync in [true, false] {
                var q = query
                q.attributes[.synchronizable] = .bool(sync)
                if case .items(let items) = t.send(.copyMatching(vault: .user(uid: uid), query: q), as: uid) {
                    out += items
                }
            }
        }
        func key(_ item: ResultItem) -> String {
            "\(item.attributes[.service] ?? item.attributes[.server] ?? .string(""))\(item.data ?? [])"
        }
        return out.sorted { key($0) < key($1) }
    }

    func fill(_ t: TestDaemon) {
        _ = t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice)
        _ = t.send(addRequest(alice, "vpn", "alice", "v-pn", accessible: .afterFirstUnlock), as: alice)
        _ = t.send(
            addRequest(alice, "host-only", "alice", "never leaves", accessible: .whenUnlockedThisDeviceOnly),
            as: alice)
        var synced = genp("chat", "alice")
        synced[.synchronizable] = .bool(true)
        synced[.label] = .string("Chat ✓")
        synced[.generic] = .bytes([0, 1, 2])
        _ = t.send(
            .add(
                AddRequest(
                    vault: .user(uid: alice), itemClass: .genericPassword, attributes: synced,
                    secret: Array("sync me".utf8))), as: alice)
        let inet: AttributeMap = [
            .server: .string("example.org"), .account: .string("alice"), .port: .uint32(443),
            .protocol: .string("htps"),
        ]
        _ = t.send(
            .add(
                AddRequest(
                    vault: .user(uid: alice), itemClass: .internetPassword, attributes: inet,
                    secret: Array("web".utf8))), as: alice)
    }

    @Test("a backup restored into a fresh state directory holds every item but ThisDeviceOnly; re-import: no change")
    func restoreIntoAFreshStateDirectory() throws {
        let source = try TestDaemon()
        defer { source.cleanUp() }
        let key = try enrolled(source, alice)
        fill(source)
        guard case .recoveryKey(let recovery) = source.send(.rotateRecoveryKey(uid: alice, key: key), as: alice) else {
            Issue.record("no recovery key")
            return
        }
        guard
            case .backup(let backup) = source.send(
                .exportItems(uid: alice, secret: recovery, passphrase: false),
                as: alice)
        else {
            Issue.record("export failed")
            return
        }
        for needle in ["s3cret", "never leaves", "mail", "example.org", "Chat"] {
            #expect(Data(backup).range(of: Data(needle.utf8)) == nil, "\(needle) in clear")
        }
        let expected = everything(source, alice).filter {
            $0.attributes[.accessible] != .accessibility(.whenUnlockedThisDeviceOnly)
        }
        #expect(expected.count == 4)

        let target = try TestDaemon()
        defer { target.cleanUp() }
        _ = try enrolled(target, alice, "another password")
        #expect(
            target.send(.importItems(uid: alice, backup: backup, secret: recovery), as: alice)
                == .importSummary(added: 4, replaced: 0, unchanged: 0))
        #expect(everything(target, alice) == expected)
        #expect(target.kernel.ring(alice, .whenUnlocked)?["arca:genp:mail:alice"] == "s3cret")
        #expect(target.kernel.ring(alice, .afterFirstUnlock) == ["arca:genp:vpn:alice": "v-pn"])
        #expect(
            target.send(.importItems(uid: alice, backup: backup, secret: recovery), as: alice)
                == .importSummary(added: 0, replaced: 0, unchanged: 4))
        #expect(everything(target, alice) == expected)
    }

    @Test("a wrong recovery key or passphrase is refused and imports nothing")
    func wrongSecrets() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        fill(t)
        let pass = Array("a long enough passphrase".utf8)
        #expect(
            statusCode(t.send(.exportItems(uid: alice, secret: Array("short".utf8), passphrase: true), as: alice))
                == -50)
        guard case .backup(let backup) = t.send(.exportItems(uid: alice, secret: pass, passphrase: true), as: alice)
        else {
            Issue.record("export failed")
            return
        }
        #expect(
            statusCode(
                t.send(
                    .importItems(uid: alice, backup: backup, secret: Array("wrong passphrase!".utf8)),
                    as: alice)) == -25293)
        var altered = backup
        altered[altered.count / 2] ^= 1
        #expect(statusCode(t.send(.importItems(uid: alice, backup: altered, secret: pass), as: alice)) == -26275)
        #expect(
            t.send(.importItems(uid: alice, backup: backup, secret: pass), as: alice)
                == .importSummary(added: 0, replaced: 0, unchanged: 4))
        // Locked: a backup that silently left out the whenUnlocked items would look complete.
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
        #expect(statusCode(t.send(.exportItems(uid: alice, secret: pass, passphrase: true), as: alice)) == -25308)
        _ = key
    }

    /// Attack: another user asks arcad to export alice's vault.
    @Test("another user cannot export or import someone's vault")
    func otherUsers() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let pass = Array("a long enough passphrase".utf8)
        #expect(statusCode(t.send(.exportItems(uid: alice, secret: pass, passphrase: true), as: alice + 1)) == -34018)
        #expect(statusCode(t.send(.importItems(uid: alice, backup: [], secret: pass), as: alice + 1)) == -34018)
    }

    /// Layer 2's bug: a mistyped but well-formed recovery key sealed a backup that the real key
    /// never opens. arcad now checks the key against the vault first, and counts a wrong one.
    @Test("export refuses a recovery key that is not the vault's own (-25293, counted) and one with none (-50)")
    func exportChecksTheRecoveryKey() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let key = try enrolled(t, alice)
        fill(t)
        // No recovery key enrolled yet: nothing to check a typed one against.
        let wellFormed = try RecoveryKey.generate().printable().withUnsafeBytes { Array($0) }
        #expect(
            t.send(.exportItems(uid: alice, secret: wellFormed, passphrase: false), as: alice)
                == .error(status: .param, message: Daemon.noRecoveryKey.message))
        guard case .recoveryKey(let old) = t.send(.rotateRecoveryKey(uid: alice, key: key), as: alice),
            case .recoveryKey(let current) = t.send(.rotateRecoveryKey(uid: alice, key: key), as: alice)
        else {
            Issue.record("no recovery key")
            return
        }
        #expect(old != current)
        for wrong in [old, wellFormed] {
            #expect(
                t.send(.exportItems(uid: alice, secret: wrong, passphrase: false), as: alice)
                    == .error(
                        status: .authFailed, message: "the recovery key does not open this vault; no backup was made"))
        }
        #expect(try t.daemon.context(alice).withLock { state throws(HandlerError) in state.failures } == 2)
        guard case .backup(let backup) = t.send(.exportItems(uid: alice, secret: current, passphrase: false), as: alice)
        else {
            Issue.record("export with the right key failed")
            return
        }
        #expect(try t.daemon.context(alice).withLock { state throws(HandlerError) in state.failures } == 0)
        // The backup made opens with the vault's key, the only one that could be typed now.
        let target = try TestDaemon()
        defer { target.cleanUp() }
        _ = try enrolled(target, alice)
        #expect(
            target.send(.importItems(uid: alice, backup: backup, secret: current), as: alice)
                == .importSummary(added: 4, replaced: 0, unchanged: 0))
    }
}
