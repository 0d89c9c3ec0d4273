import ArcaCrypto
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaKeyring

extension KeyringRootTests {
    @Test("root: 5,000 items for one user are all readable and the user's quota is charged only the link")
    func fiveThousandItems() throws {
        try withTwoUsers(farUids: true) { owner, _ in
            // Make @u exist first, so the baseline already includes it.
            #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == nil)
            let before = try #require(try KeyQuota.current(uid: owner.uid))
            let items = try (0..<5_000).map { try testItem(service: "bulk", account: "a\($0)") }
            // Above arcad's default per-user budget (2,000 keys), which is policy, not a kernel limit.
            let large = KeyringLayout(budget: KernelBudget(keysPerUser: 10_000, bytesPerUser: 8 << 20))
            let report = try large.install(user: owner.uid, class: .whenUnlocked, items: items)
            #expect(report.loaded == 5_000)
            #expect(report.notLoaded.isEmpty)
            let after = try #require(try KeyQuota.current(uid: owner.uid))
            #expect(after.quotaKeys == before.quotaKeys)
            #expect(after.keys == before.keys)
            #expect(after.quotaBytes == before.quotaBytes + 4, "one keyring link costs 4 bytes")
            // Root pays for the keys: the kernel charges a key to its owner, and every one
            // is root's. (Root's machine-wide counter is not compared: suites running in
            // parallel add and remove root keys at the same time.)
            let links = try report.ring.links()
            #expect(links.count == 5_000)
            #expect(try links.allSatisfy { try $0.describe().uid == 0 })
            #expect(try owner.probe("read-many", "none", "bulk", "5000") == "ok read=5000 mismatched=0")
            #expect(try owner.probe("read-many", "fresh", "bulk", "5000") == "ok read=5000 mismatched=0")
        }
    }

    @Test(
        "root: a child forked and exec'd by a process that handled items cannot reach them through inherited keyrings")
    func percolation() throws {
        try withTwoUsers { owner, other in
            try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "mail", account: "a0")])
            try layout.grant(uid: owner.uid, items: [try testItem(service: "db", account: "s0")])
            // The reader linked @u into its process keyring; its exec'd child gets none of it.
            #expect(try owner.probe("percolate", "arca:genp:mail:a0") == "ok process=1 session=1")
            // The installer (this process) keeps nothing in its keyrings: a child of it,
            // running as another user, finds nothing through @s, @p or @t.
            #expect(try KeySerial.threadKeyring.links().isEmpty)
            for ring in ["@s", "@p", "@t"] {
                for description in ["arca:genp:mail:a0", "arca:genp:db:s0"] {
                    let found = try run(other.command(["keyctl", "search", ring, "user", description]))
                    #expect(found.status == 1, "\(ring) \(description): \(found.stdout)")
                }
                let ringFound = try run(other.command(["keyctl", "search", ring, "keyring", "arca:wu"]))
                #expect(ringFound.status == 1)
            }
        }
    }

    @Test("root: purge clears a deleted account's rings, @u and persistent keyring")
    func purge() throws {
        try withTwoUsers { owner, _ in
            let wu = try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "mail", account: "a0")])
            let afu = try layout.install(
                user: owner.uid, class: .afterFirstUnlock, items: [try testItem(service: "vpn", account: "a1")])
            let svc = try layout.grant(uid: owner.uid, items: [try testItem(service: "db", account: "a2")])
            let serials = Set(
                try [wu.ring, afu.ring, svc.ring].flatMap { [$0.rawValue] + (try $0.links().map(\.rawValue)) })
            #expect(serials.count == 6)
            let home = KeySerial(rawValue: try UserKeyringSwitch.run(uid: owner.uid, find: nil).userKeyring)
            let purged = layout.purge(user: owner.uid)
            #expect(purged.isComplete && purged.destroyed == 6 && purged.changedPermissions == nil)
            // The uid's @u and @us are invalidated: once the kernel's collector has run it
            // counts no key of the uid (a recycled uid starts with new ones).
            #expect(throws: KeyringErrno.noKey) { try home.describe() }
            var left = try KeyQuota.current(uid: owner.uid)?.keys ?? 0
            for _ in 0..<100 where left > 0 {
                usleep(10_000)
                left = try KeyQuota.current(uid: owner.uid)?.keys ?? 0
            }
            #expect(left == 0)
            #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == nil)
            #expect(try layout.ring(user: owner.uid, class: .afterFirstUnlock) == nil)
            #expect(try layout.revoke(uid: owner.uid) == 0)
            let listed = try run(owner.command(["keyctl", "rlist", "@u"]))
            #expect(listed.stdout == "")
            usleep(100_000)
            #expect(try procKeysSerials().isDisjoint(with: serials))
            // A recycled uid starts clean and can be loaded again.
            #expect(try layout.remove(user: owner.uid, class: .whenUnlocked) == 0)
            let again = try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "mail", account: "a3")])
            #expect(again.loaded == 1)
            #expect(try owner.probe("read", "none", "arca:genp:mail:a3") == "ok " + hex("secret-a3"))
        }
    }

    @Test("root: purge of a uid that never had keys, then install, works")
    func purgeFreshUid() throws {
        try requireRootAndKeyring()
        for _ in 0..<20 {
            let uid = UInt32(3_800_000 + Int.random(in: 0..<99_999))
            defer { layout.purge(user: uid) }
            #expect(layout.purge(user: uid).isComplete)
            #expect(try layout.ring(user: uid, class: .whenUnlocked) == nil)
            let report = try layout.install(
                user: uid, class: .whenUnlocked, items: [try testItem(service: "m", account: "a")])
            #expect(report.loaded == 1)
        }
    }

    @Test("root: a full quota surfaces as the named errno EDQUOT")
    func quotaErrno() throws {
        try withTwoUsers { owner, _ in
            // A plain user's 200-key quota stands in for root's million, which the
            // tests must not fill on a shared machine; the errno path is the same.
            let line = try owner.probe("fill-quota")
            #expect(line == "error EDQUOT")
        }
    }

    @Test("root: root's quota headroom is read from /proc/key-users and the sysctl limits")
    func rootHeadroom() throws {
        try requireRootAndKeyring()
        let root = try KeyQuota.root()
        let maxKeys = try #require(ProcFile.read("/proc/sys/kernel/keys/root_maxkeys"))
        let maxBytes = try #require(ProcFile.read("/proc/sys/kernel/keys/root_maxbytes"))
        #expect(String(root.maximumKeys) == maxKeys.filter { !$0.isWhitespace })
        #expect(String(root.maximumBytes) == maxBytes.filter { !$0.isWhitespace })
        #expect(root.headroomKeys == root.maximumKeys - root.quotaKeys)
        let expiry = try #require(ProcFile.read("/proc/sys/kernel/keys/persistent_keyring_expiry"))
        #expect(String(try KeyQuota.persistentKeyringExpiry()) == expiry.filter { !$0.isWhitespace })
        #expect(try KeyringLayout.refreshInterval() == KeyQuota.persistentKeyringExpiry() / 2)
    }
}
