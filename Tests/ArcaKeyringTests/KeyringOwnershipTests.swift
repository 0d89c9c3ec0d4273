import ArcaCrypto
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaKeyring

/// arcad owns what it puts in the kernel (issue 13): it destroys by serial, with
/// no help from the user's keyrings; budgets cap what one uid may take.
@Suite("Kernel keyring ownership and budgets (root, real kernel)", .serialized)
struct KeyringOwnershipTests {
    @Test("root: rings and keys are root-owned, tagged with the uid as group, with final permissions")
    func tagged() throws {
        try withTwoUsers { owner, _ in
            let layout = KeyringLayout()
            let report = try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "m", account: "a")])
            #expect(
                try layout.put(item: try testItem(service: "m", account: "b"), user: owner.uid, class: .whenUnlocked)
                    == .placed)
            let ring = try report.ring.describe()
            #expect(ring.uid == 0 && ring.gid == owner.uid && ring.permissions == 0x0b3f_0000)
            let keys = try report.ring.links()
            #expect(keys.count == 2)
            for key in keys {
                let info = try key.describe()
                #expect(info.uid == 0 && info.gid == owner.uid && info.permissions == 0x0b3f_0000)
            }
            #expect(try owner.probe("read", "none", "arca:genp:m:b") == "ok " + hex("secret-b"))
            // Replacing by description destroys the older key at once.
            let older = try #require(try keys.first { try $0.describe().description == "arca:genp:m:b" })
            let newer = KeyringItem(
                key: .genericPassword(GenericPasswordKey(service: "m", account: "b")), secret: try secret("new"))
            #expect(try layout.put(item: newer, user: owner.uid, class: .whenUnlocked) == .placed)
            #expect(throws: KeyringErrno.self) { try older.describe() }
            #expect(try owner.probe("read", "none", "arca:genp:m:b") == "ok " + hex("new"))
            #expect(try KeySerial.threadKeyring.links().isEmpty)
        }
    }

    @Test("root: after the user's keyctl setperm @u 0x003f0000, remove still destroys every key")
    func removeIgnoresUserKeyring() throws {
        try withTwoUsers { owner, _ in
            let layout = KeyringLayout()
            let report = try layout.install(
                user: owner.uid, class: .whenUnlocked,
                items: try (0..<5).map { try testItem(service: "m", account: "a\($0)") })
            #expect(try owner.run(["keyctl", "setperm", "@u", "0x003f0000"]).status == 0)
            #expect(try owner.probe("read", "none", "arca:genp:m:a0") == "ok " + hex("secret-a0"))
            #expect(try layout.remove(user: owner.uid, class: .whenUnlocked) == 5)
            #expect(throws: KeyringErrno.self) { try report.ring.describe() }
            #expect(try owner.probe("read", "none", "arca:genp:m:a0") == "error ENOKEY")
            // The purge says what the user had done; the uid's next @u is a new one, as the
            // kernel makes it (once its collector has dropped the old one).
            let purged = layout.purge(user: owner.uid)
            #expect(purged.isComplete && purged.changedPermissions == 0x003f_0000)
            var described = try run(owner.command(["keyctl", "rdescribe", "@u"]))
            for _ in 0..<100 where described.status != 0 {
                usleep(10_000)
                described = try run(owner.command(["keyctl", "rdescribe", "@u"]))
            }
            #expect(described.stdout.hasSuffix(";1f3f0000;_uid.\(owner.uid)"))
        }
    }

    @Test("root: without its ledger (a restarted arcad) remove finds the keys in /proc/keys by owner and tag")
    func removeWithoutLedger() throws {
        try withTwoUsers { owner, other in
            let before = KeyringLayout()
            let wu = try before.install(
                user: owner.uid, class: .whenUnlocked,
                items: try (0..<3).map { try testItem(service: "m", account: "a\($0)") })
            let afu = try before.install(
                user: owner.uid, class: .afterFirstUnlock, items: [try testItem(service: "v", account: "k")])
            let others = try before.install(
                user: other.uid, class: .whenUnlocked, items: [try testItem(service: "o", account: "o")])
            let after = KeyringLayout()
            #expect(try after.remove(user: owner.uid, class: .whenUnlocked) == 3)
            #expect(throws: KeyringErrno.self) { try wu.ring.describe() }
            #expect(try owner.probe("read", "none", "arca:genp:m:a0") == "error ENOKEY")
            // The other class and the other user are untouched.
            #expect(try afu.ring.links().count == 1)
            #expect(try owner.probe("read", "none", "arca:genp:v:k") == "ok " + hex("secret-k"))
            #expect(try others.ring.links().count == 1)
            #expect(try after.remove(user: owner.uid, class: .whenUnlocked) == 0)
        }
    }

    @Test("root: a budget caps one uid's keys and bytes across both classes; the rest is reported over budget")
    func budget() throws {
        try withTwoUsers { owner, _ in
            // "arca:genp:m:aN" is 14 bytes: each key costs 14 + 1 + 9 ("secret-aN") + 4 = 28; a ring 12 or 13.
            let layout = KeyringLayout(budget: KernelBudget(keysPerUser: 1_000, bytesPerUser: 13 + 12 + 28 * 3))
            try layout.install(user: owner.uid, class: .afterFirstUnlock, items: [])
            let report = try layout.install(
                user: owner.uid, class: .whenUnlocked,
                items: try (0..<5).map { try testItem(service: "m", account: "a\($0)") })
            #expect(report.loaded == 3)
            #expect(report.notLoaded.map(\.reason) == [.overBudget, .overBudget])
            #expect(
                try layout.put(item: try testItem(service: "m", account: "a9"), user: owner.uid, class: .whenUnlocked)
                    == .notLoaded(.overBudget))
            let keys = KeyringLayout(budget: KernelBudget(keysPerUser: 3))
            try keys.install(user: owner.uid, class: .afterFirstUnlock, items: [])
            #expect(
                try keys.install(
                    user: owner.uid, class: .whenUnlocked,
                    items: try (0..<5).map { try testItem(service: "m", account: "a\($0)") }
                ).loaded == 1)
        }
    }

    @Test("the root reserve: arcad's allowance stops at its share of root_maxkeys / root_maxbytes")
    func rootReserve() throws {
        let root = try #require(KeyQuota(line: "    0:  4000 3999/3999 400000/1000000 12000000/25000000"))
        let budget = KernelBudget(rootSharePercent: 50)
        #expect(budget.rootAllowance(root) == KeyCost(keys: 100_000, bytes: 500_000))
        let full = try #require(KeyQuota(line: "    0:  4000 3999/3999 600000/1000000 13000000/25000000"))
        #expect(budget.rootAllowance(full) == KeyCost(keys: 0, bytes: 0))
    }

    @Test("/proc/keys lines parse into serial, owner, group and type")
    func procKeysLine() throws {
        let line: Substring = "1a2b3c4d I--Q---     1 perm 0b3f0000     0  1001 keyring   arca:wu: 3"
        #expect(
            KeyScan.parse(line: line)
                == KeyScan.Entry(serial: KeySerial(rawValue: 0x1a2b_3c4d), uid: 0, gid: 1001, type: "keyring"))
        #expect(KeyScan.parse(line: "garbage") == nil)
    }
}

/// The uid-switch helper's wait is bounded on every path (issue 13, point 4);
/// holds a stopwatch, so it runs alone.
@Suite("Keyring helper wait (root, real kernel)", .serialized)
struct KeyringHelperTimingTests {
    @Test("root: a helper the user stops is killed within the bound, with and without pidfd_open")
    func stoppedHelperIsBounded() throws {
        try withTwoUsers { owner, _ in
            let stopper = try owner.startStoppingEverything()
            defer { owner.stopSignalling(stopper) }
            usleep(100_000)
            for pollWait in [false, true] {
                var stopped = 0
                // The helper lives about 0.2 ms: give the stopper many chances to catch one.
                for _ in 0..<1_000 where stopped == 0 {
                    let start = Clock.monotonicSeconds()
                    do throws(KeyringError) {
                        _ = try UserKeyringSwitch.run(uid: owner.uid, find: "arca:wu", pollWait: pollWait)
                    } catch {
                        stopped += 1
                        #expect(
                            error == KeyringError.helperFailed(uid: owner.uid, signal: SIGKILL), "pollWait \(pollWait)")
                    }
                    let elapsed = Clock.monotonicSeconds() - start
                    // 1 s, plus the killed helper's and our own scheduling on a loaded machine;
                    // an unbounded wait would never return.
                    #expect(elapsed < 2.5, "pollWait \(pollWait): waited \(Int(elapsed * 1000)) ms")
                }
                #expect(stopped == 1, "the stopper never caught a helper (pollWait \(pollWait))")
            }
        }
    }
}
