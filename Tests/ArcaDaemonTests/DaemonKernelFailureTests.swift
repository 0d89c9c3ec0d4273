import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaDaemon

/// What arcad tells its callers when the kernel refuses (issue 13): a lock that
/// could not destroy every key is an error and shows in status, never success;
/// a write whose old secret may still be in the kernel is an error too; a full
/// vault refuses writes with errSecQuotaExceeded.
@Suite("in-process arcad: reports kernel failures (root)", .serialized)
struct DaemonKernelFailureTests {
    let alice: UInt32 = 60_011

    func enrolled(_ t: TestDaemon) throws -> [UInt8] {
        let key = try derivedKey("pw")
        #expect(t.send(.enroll(uid: alice, key: key, parameters: testParameters), as: 0) == .ok)
        return key
    }

    func status(_ t: TestDaemon) -> VaultStatus? {
        guard case .status(let status) = t.send(.status(uid: alice), as: alice) else { return nil }
        return status
    }

    @Test("a lock the kernel refuses is errSecInternalComponent, shows in status, and is retried until done")
    func incompleteLock() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t)
        #expect(t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice) == .items([]))
        t.kernel.removalsFail.store(true, ordering: .relaxed)
        let reply = t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice)
        #expect(
            reply
                == .error(
                    status: .internalComponent,
                    message: "lock incomplete: keys of whenUnlocked are still in the kernel; see arcad's log"))
        #expect(status(t)?.unlocked == .afterFirstUnlock)
        #expect(status(t)?.lockIncomplete == .whenUnlocked)
        // The same from the login stack's last close and from lock-all.
        #expect(statusCode(t.send(.lockAll, as: alice)) == -2070)
        #expect(status(t)?.lockIncomplete == .all)
        // Once the kernel lets go, the next status (or lock) finishes the job.
        t.kernel.removalsFail.store(false, ordering: .relaxed)
        #expect(status(t)?.lockIncomplete == [])
        #expect(t.kernel.ring(alice, .whenUnlocked) == nil)
        #expect(t.send(.lock(uid: alice, classes: .whenUnlocked), as: alice) == .ok)
    }

    @Test("an update or delete whose old key or ring cannot be destroyed is not reported as success")
    func staleWrite() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t)
        #expect(t.send(addRequest(alice, "mail", "alice", "s3cret"), as: alice) == .items([]))
        #expect(t.send(addRequest(alice, "mail", "bob", "s3cret"), as: alice) == .items([]))
        // A rename whose old key survives.
        t.kernel.dropsFail.store(true, ordering: .relaxed)
        let rename = UpdateRequest(
            vault: .user(uid: alice), query: Query(itemClass: .genericPassword, attributes: genp("mail", "bob")),
            attributes: [.account: .string("carol")])
        #expect(statusCode(t.send(.update(rename), as: alice)) == -2070)
        // A delete whose old key survives.
        let query = Query(itemClass: .genericPassword, attributes: genp("mail", "alice"))
        #expect(statusCode(t.send(.delete(vault: .user(uid: alice), query: query), as: alice)) == -2070)
        t.kernel.dropsFail.store(false, ordering: .relaxed)
        #expect(secretText(t.send(getRequest(alice, "mail", "alice"), as: alice)) == "error -25300")
        // A new secret the ring must be rebuilt for, and whose old ring survives.
        t.kernel.putsReinstall.store(true, ordering: .relaxed)
        t.kernel.installsFail.store(true, ordering: .relaxed)
        let newSecret = UpdateRequest(
            vault: .user(uid: alice), query: Query(itemClass: .genericPassword, attributes: genp("mail", "carol")),
            attributes: [:], secret: Array("n".utf8))
        #expect(statusCode(t.send(.update(newSecret), as: alice)) == -2070)
        t.kernel.installsFail.store(false, ordering: .relaxed)
        t.kernel.putsReinstall.store(false, ordering: .relaxed)
        #expect(secretText(t.send(getRequest(alice, "mail", "carol"), as: alice)) == "n")
    }

    @Test("a vault at max_vault_bytes refuses add and update with errSecQuotaExceeded; delete still works")
    func vaultLimit() throws {
        var config = DaemonConfig()
        config.maxVaultBytes = 1 << 20
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        _ = try enrolled(t)
        let big = String(repeating: "x", count: 60_000)
        var added = 0
        var refusal: Reply?
        for i in 0..<100 {
            let reply = t.send(addRequest(alice, "bulk", "a\(i)", big), as: alice)
            guard reply == .items([]) else {
                refusal = reply
                break
            }
            added += 1
        }
        #expect(added >= 10 && added < 100)
        guard case .error(let code, let message) = refusal else {
            Issue.record("no refusal: \(String(describing: refusal))")
            return
        }
        #expect(code == .quotaExceeded)
        #expect(
            message.hasPrefix("the vault is full (")
                && message.hasSuffix(
                    "; the limit is 1048576, arca.conf max_vault_bytes); delete items to make room")
        )
        let query = Query(itemClass: .genericPassword, attributes: genp("bulk", "a0"))
        #expect(t.send(.delete(vault: .user(uid: alice), query: query), as: alice) == .ok)
        #expect(secretText(t.send(getRequest(alice, "bulk", "a1"), as: alice)) == big)
    }
}
