import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// Issue 13's attacks, performed for real against the arcad binary by throwaway
/// users with an ordinary account: `keyctl setperm` on their own `@u`, SIGSTOP
/// of arcad's uid-switch helper, a flood of large items, `userdel` and a
/// recycled uid, and a root session keyring passed on by `setpriv`. Each one
/// ends with a kernel-only read (`ARCA_SOCKET=/nonexistent arca get`).
@Suite("arcad binary: under attack: lock means gone, one user cannot hurt another (root, real kernel)", .serialized)
struct KernelAttackTests {
    func purge(_ user: TestUser) { _ = KeyringLayout().purge(user: user.uid) }

    /// What `arca get` prints as `user` from the kernel alone (no arcad to fall back on).
    func kernelOnlyGet(_ user: TestUser, _ service: String, _ account: String) throws -> CommandResult {
        try user.run(["env", "ARCA_SOCKET=/nonexistent", builtExecutable("arca"), "get", "-s", service, "-a", account])
    }

    func status(_ arcad: ArcadProcess, _ uid: UInt32) throws -> VaultStatus {
        guard case .status(let status) = try arcad.send(.status(uid: uid)) else { throw TestSupportError("no status") }
        return status
    }

    func enroll(_ arcad: ArcadProcess, _ user: TestUser) throws {
        #expect(
            try arcad.send(.enroll(uid: user.uid, key: try derive("pw-\(user.name)"), parameters: e2eParameters))
                == .ok)
    }

    /// arcad with `user` enrolled and one whenUnlocked item, readable from the kernel.
    func arcadWithItem(_ user: TestUser) throws -> ArcadProcess {
        let arcad = try ArcadProcess()
        try enroll(arcad, user)
        #expect(try arcad.send(add(user.uid, "mail", "bob", "s3cret")) == .items([]))
        #expect(try kernelOnlyGet(user, "mail", "bob").stdout == "s3cret")
        return arcad
    }

    @Test("attack: the user sets @u to 0x003f0000 in a session linking it; lock still removes whenUnlocked")
    func lockAfterSetperm() throws {
        try withThrowawayUsers(1, prefix: "keyringa", cleanup: purge) { users in
            let bob = users[0]
            let arcad = try arcadWithItem(bob)
            defer { arcad.stop() }
            let setperm = try bob.run(
                [
                    "keyctl", "session", "-", "sh", "-c",
                    "keyctl link @u @s && keyctl setperm @u 0x003f0000 && keyctl rdescribe @u",
                ])
            #expect(setperm.stdout.hasPrefix("keyring;\(bob.uid);") && setperm.stdout.contains(";003f0000;_uid."))
            // Still readable by its owner: the lock, not the setperm, must make it go.
            #expect(try kernelOnlyGet(bob, "mail", "bob").stdout == "s3cret")

            #expect(try arcad.send(.lock(uid: bob.uid, classes: .whenUnlocked)) == .ok)
            let after = try kernelOnlyGet(bob, "mail", "bob")
            #expect(after.stdout == "" && after.status != 0, "read after lock: \(after.stdout) \(after.status)")
            let state = try status(arcad, bob.uid)
            #expect(state.unlocked == .afterFirstUnlock && state.lockIncomplete == [])
        }
    }

    @Test("attack: the user SIGSTOPs every process it may signal during lock; the lock still destroys")
    func lockWhileHelperStopped() throws {
        try withThrowawayUsers(1, prefix: "keyringa", cleanup: purge) { users in
            let bob = users[0]
            let arcad = try arcadWithItem(bob)
            defer { arcad.stop() }
            let stopper = try bob.startStoppingEverything()
            usleep(100_000)
            let reply = try arcad.send(.lock(uid: bob.uid, classes: .all))
            bob.stopSignalling(stopper)
            #expect(reply == .ok)
            let after = try kernelOnlyGet(bob, "mail", "bob")
            #expect(after.stdout == "" && after.status != 0, "read after lock: \(after.stdout) \(after.status)")
            #expect(try status(arcad, bob.uid).lockIncomplete == [])
        }
    }

    @Test("attack: publishing fails after update and delete; the old secrets never stay readable kernel-only")
    func failedPublishLeavesNothing() throws {
        try withThrowawayUsers(1, prefix: "keyringa", cleanup: purge) { users in
            let bob = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            try enroll(arcad, bob)
            for (service, secret) in [("mail", "old-mail"), ("web", "w"), ("vpn", "v1")] {
                #expect(try arcad.send(add(bob.uid, service, "bob", secret)) == .items([]))
            }
            #expect(try kernelOnlyGet(bob, "vpn", "bob").stdout == "v1")
            // From now on a new ring cannot be linked into bob's @u (EACCES): every
            // republish fails, as it did when root's quota was full.
            #expect(try bob.run(["keyctl", "setperm", "@u", "0x003f0000"]).status == 0)

            // One-item writes change one key in the ring already linked: no republish.
            let update = UpdateRequest(
                vault: .user(uid: bob.uid),
                query: Query(
                    itemClass: .genericPassword,
                    attributes: [.service: .string("vpn"), .account: .string("bob")]),
                attributes: [:], secret: Array("v2".utf8))
            #expect(try arcad.send(.update(update)) == .ok)
            #expect(try kernelOnlyGet(bob, "vpn", "bob").stdout == "v2")
            let delete = Query(
                itemClass: .genericPassword,
                attributes: [.service: .string("mail"), .account: .string("bob")])
            #expect(try arcad.send(.delete(vault: .user(uid: bob.uid), query: delete)) == .ok)
            #expect(try kernelOnlyGet(bob, "mail", "bob").stdout == "")
            #expect(try kernelOnlyGet(bob, "web", "bob").stdout == "w")

            // A write of more than 64 items rebuilds the ring, which cannot be linked:
            // the old ring is destroyed anyway, and nothing old stays kernel-only.
            for i in 0..<65 { #expect(try arcad.send(add(bob.uid, "bulk\(i)", "bob", "b")) == .items([])) }
            let all = UpdateRequest(
                vault: .user(uid: bob.uid),
                query: Query(itemClass: .genericPassword, attributes: [.account: .string("bob")]),
                attributes: [:], secret: Array("v3".utf8))
            #expect(try arcad.send(.update(all)) == .ok)
            #expect(try kernelOnlyGet(bob, "vpn", "bob").stdout == "")
            #expect(try kernelOnlyGet(bob, "web", "bob").stdout == "")
            #expect(try kernelOnlyGet(bob, "bulk0", "bob").stdout == "")
            // The class is served from the socket, and status counts it.
            #expect(try arcad.send(get(bob.uid, "vpn", "bob")) == .items([ResultItem(data: Array("v3".utf8))]))
            #expect(try status(arcad, bob.uid).itemsNotInKernel == 67)
        }
    }

    @Test("attack: one user floods large items; arcad stops at their budget and the other user's items load")
    func floodStopsAtBudget() throws {
        try withThrowawayUsers(2, prefix: "keyringa", cleanup: purge) { users in
            let (mallory, alice) = (users[0], users[1])
            let arcad = try ArcadProcess(config: "kernel_bytes_per_user = 400000\n")
            defer { arcad.stop() }
            try enroll(arcad, mallory)
            try enroll(arcad, alice)
            let big = String(repeating: "x", count: 32_000)
            for i in 0..<20 {
                let account = "a" + String(1000 + i).dropFirst()
                #expect(try arcad.send(add(mallory.uid, "flood", account, big)) == .items([]))
            }
            // Each item costs 20 + 1 + 32,000 + 4 bytes; the two rings 25 bytes: 12 fit in
            // 400,000, the other 8 stay socket-only (and still readable there).
            #expect(try status(arcad, mallory.uid).itemsNotInKernel == 8)
            #expect(try kernelOnlyGet(mallory, "flood", "a011").stdout == big)
            #expect(try kernelOnlyGet(mallory, "flood", "a012").stdout == "")
            #expect(try mallory.probe(arcad.socket, "get", "\(mallory.uid)", "flood", "a019") == "ok " + big)
            #expect(try arcad.send(add(alice.uid, "mail", "alice", "hers")) == .items([]))
            #expect(try kernelOnlyGet(alice, "mail", "alice").stdout == "hers")
            #expect(try status(arcad, alice.uid).itemsNotInKernel == 0)
        }
    }

    @Test("attack: a root session keyring passed on by setpriv (no pam_keyinit) reads no parked key: EACCES")
    func parkedKeysOwnerOnly() throws {
        try withThrowawayUsers(2, prefix: "keyringa", cleanup: purge) { users in
            let (alice, bob) = (users[0], users[1])
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            try enroll(arcad, alice)
            // The key this arcad parked for alice in root's @u: arcad:parked:<tag>:<uid>, the
            // tag naming its state directory (other arcads on the machine park their own).
            let digest = try KeyedHash.blake2b(Array((arcad.directory + "/state").utf8), outputLength: 16)
            let tag = digest.prefix(6).map { String(format: "%02x", $0) }.joined()
            let search = try run(["keyctl", "search", "@u", "user", "arcad:parked:\(tag):\(alice.uid)"])
            let serial = try #require(Int32(search.stdout), "no parked key: \(search.stderr)")
            #expect(try KeySerial(rawValue: serial).describe().permissions == 0x003f_0000)
            // root's login session links root's @u; su/runuser/setpriv without pam_keyinit
            // hand that session keyring to the target user.
            let chain = try run([
                "keyctl", "session", "-", "sh", "-c",
                "keyctl link @u @s >/dev/null && exec "
                    + bob.command(["keyctl", "pipe", "\(serial)"])
                    .joined(separator: " "),
            ])
            #expect(chain.status == 1)
            #expect(chain.stdout == "")
            #expect(chain.stderr.hasSuffix("Permission denied"), "got: \(chain.stderr)")
        }
    }

    @Test("attack: after userdel a recycled uid inherits nothing, and its @u has the default permissions")
    func recycledUidInheritsNothing() throws {
        try withThrowawayUsers(1, prefix: "keyringa", farUids: true, cleanup: purge) { users in
            let bob = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            try enroll(arcad, bob)
            #expect(try arcad.send(add(bob.uid, "mail", "bob", "s3cret")) == .items([]))
            #expect(try arcad.send(add(bob.uid, "vpn", "bob", "v", accessible: .afterFirstUnlock)) == .items([]))
            // The departing user plants a key and locks everyone else out of the keyring.
            #expect(try bob.run(["keyctl", "add", "user", "planted", "hello", "@u"]).status == 0)
            #expect(try bob.run(["keyctl", "setperm", "@u", "0x003f0000"]).status == 0)
            #expect(try run(["userdel", "-f", bob.name]).status == 0)
            // arcad clears a deleted account's keyrings at start (and every minute).
            arcad.kill9()
            try arcad.start()

            let asUid = ["setpriv", "--reuid=\(bob.uid)", "--regid=\(bob.gid)", "--clear-groups"]
            let described = try run(asUid + ["keyctl", "rdescribe", "@u"]).stdout
            #expect(
                described.hasPrefix("keyring;\(bob.uid);") && described.hasSuffix(";1f3f0000;_uid.\(bob.uid)"),
                "got \(described)")
            #expect(try run(asUid + ["keyctl", "rlist", "@u"]).stdout == "")
            let name = "keyringr" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
            #expect(
                try run(["useradd", "-o", "-M", "-N", "-u", "\(bob.uid)", "-s", "/usr/sbin/nologin", name]).status == 0)
            defer { _ = try? run(["userdel", "-f", name]) }
            let heir = TestUser(name: name, uid: bob.uid, gid: bob.gid)
            #expect(try kernelOnlyGet(heir, "mail", "bob").stdout == "")
            #expect(try kernelOnlyGet(heir, "vpn", "bob").stdout == "")
            #expect(try heir.run(["keyctl", "search", "@u", "user", "planted"]).status == 1)
        }
    }
}
