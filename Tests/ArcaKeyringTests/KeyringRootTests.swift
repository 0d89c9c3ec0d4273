import ArcaCrypto
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaKeyring

/// Real-kernel tests, as root, with two throwaway users. Serialized: they add
/// users (one /etc/passwd lock) and measure timings.
@Suite("Kernel keyring layout (root, real kernel)", .serialized)
struct KeyringRootTests {
    let layout = KeyringLayout()

    @Test("root: the tests have root and a kernel keyring (fails loudly otherwise)")
    func rootAndKeyring() throws {
        try requireRootAndKeyring()
    }

    @Test("root: install places root-owned keys with perm 0x0b3f0000 in ring arca:wu of the user's @u")
    func installLayout() throws {
        try withTwoUsers { owner, _ in
            let items = try (0..<3).map { try testItem(service: "mail", account: "a\($0)") }
            let report = try layout.install(user: owner.uid, class: .whenUnlocked, items: items)
            #expect(report.loaded == 3)
            #expect(report.notLoaded.isEmpty)
            let ring = try #require(try layout.ring(user: owner.uid, class: .whenUnlocked))
            #expect(ring == report.ring)
            let ringInfo = try ring.describe()
            #expect(ringInfo.type == "keyring")
            #expect(ringInfo.uid == 0)
            #expect(ringInfo.permissions == 0x0b3f_0000)
            #expect(ringInfo.description == "arca:wu")
            let keys = try ring.links()
            #expect(keys.count == 3)
            for key in keys {
                let info = try key.describe()
                #expect(info.type == "user")
                #expect(info.uid == 0)
                #expect(info.permissions == 0x0b3f_0000)
                #expect(info.description.hasPrefix("arca:genp:mail:a"))
            }
            // Nothing stays behind in the installer's thread keyring.
            #expect(try KeySerial.threadKeyring.links().isEmpty)
            // The ring is linked into the owner's @u, as keyctl shows it.
            let shown = try run(owner.command(["keyctl", "rdescribe", "@u"]))
            #expect(shown.stdout.hasPrefix("keyring;\(owner.uid);"))
            #expect(shown.stdout.hasSuffix(";_uid.\(owner.uid)"))
            let search = try run(owner.command(["keyctl", "search", "@u", "keyring", "arca:wu"]))
            #expect(search.stdout == String(ring.rawValue))
        }
    }

    @Test("root: the owner reads an item with keyctl print and with the library, from all three session kinds")
    func ownerReads() throws {
        try withTwoUsers { owner, _ in
            try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "mail", account: "a0")])
            try layout.install(
                user: owner.uid, class: .afterFirstUnlock, items: [try testItem(service: "vpn", account: "a1")])
            // The library, from a pam_keyinit-like session, a fresh private session, and no session.
            for mode in ["pam", "fresh", "none"] {
                #expect(try owner.probe("read", mode, "arca:genp:mail:a0") == "ok " + hex("secret-a0"), "mode \(mode)")
                #expect(try owner.probe("read", mode, "arca:genp:vpn:a1") == "ok " + hex("secret-a1"), "mode \(mode)")
            }
            // keyctl(1), pam_keyinit style: a new session keyring with @u linked in.
            let pam = try run(
                owner.command([
                    "keyctl", "session", "-", "sh", "-c",
                    "keyctl link @u @s && keyctl print $(keyctl search @s user arca:genp:mail:a0)",
                ]))
            #expect(pam.stdout == "secret-a0")
            // keyctl(1) with no session keyring: the user-session keyring gives possession of @u.
            let serial = try run(owner.command(["keyctl", "search", "@u", "user", "arca:genp:mail:a0"])).stdout
            let none = try run(owner.command(["keyctl", "print", serial]))
            #expect(none.stdout == "secret-a0")
            // keyctl(1) from a fresh session keyring: link @u first, as arca-keyring(7) says.
            let fresh = try run(
                owner.command(["keyctl", "session", "-", "sh", "-c", "keyctl link @u @s && keyctl print \(serial)"]))
            #expect(fresh.stdout == "secret-a0")
            let freshUnlinked = try run(owner.command(["keyctl", "session", "-", "keyctl", "print", serial]))
            #expect(freshUnlinked.status == 1)
            #expect(freshUnlinked.stderr.hasSuffix("Permission denied"))
        }
    }

    @Test("root: another user cannot read, search, link or describe; the owner cannot write, setperm or link elsewhere")
    func isolation() throws {
        try withTwoUsers { owner, other in
            let report = try layout.install(
                user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "mail", account: "a0")])
            let ring = report.ring.rawValue
            let item = try #require(try report.ring.links().first).rawValue
            // The other user.
            #expect(try other.probe("read-serial", "\(item)") == "error EACCES")
            #expect(try other.probe("describe", "\(item)") == "error EACCES")
            #expect(try other.probe("search", "\(ring)", "user", "arca:genp:mail:a0") == "error EACCES")
            #expect(try other.probe("link", "\(item)", "u") == "error EACCES")
            #expect(try other.probe("link", "\(ring)", "u") == "error EACCES")
            #expect(try other.probe("describe", "\(ring)") == "error EACCES")
            for mode in ["pam", "fresh", "none"] {
                #expect(try other.probe("read", mode, "arca:genp:mail:a0") == "error ENOKEY", "mode \(mode)")
            }
            // The owner: reads, but cannot change anything or pass it on.
            #expect(try owner.probe("read-serial", "\(item)") == "ok " + hex("secret-a0"))
            #expect(try owner.probe("update", "\(item)") == "error EACCES")
            #expect(try owner.probe("setperm", "\(item)") == "error EACCES")
            #expect(try owner.probe("setperm", "\(ring)") == "error EACCES")
            #expect(try owner.probe("link", "\(item)", "s") == "error EACCES")
            #expect(try owner.probe("link", "\(ring)", "s") == "error EACCES")
            #expect(try owner.probe("read-serial", "\(item)") == "ok " + hex("secret-a0"))
        }
    }

    @Test("root: a reader looping during install never sees a half-filled ring")
    func installIsAtomic() throws {
        try withTwoUsers { owner, _ in
            let items = try (0..<100).map { try testItem(service: "mail", account: "a\($0)") }
            let first = try layout.install(user: owner.uid, class: .whenUnlocked, items: items)
            let watcher = Process()
            watcher.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            watcher.arguments = Array(owner.command([probePath, "watch-ring", "2", "100"]).dropFirst())
            let out = Pipe()
            watcher.standardOutput = out
            try watcher.run()
            usleep(200_000)
            var installs = 0
            var last = first.ring
            let end = Clock.monotonicSeconds() + 1.5
            while Clock.monotonicSeconds() < end {
                let report = try layout.install(user: owner.uid, class: .whenUnlocked, items: items)
                #expect(report.loaded == 100)
                #expect(report.ring != last)
                last = report.ring
                installs += 1
            }
            let line = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            watcher.waitUntilExit()
            #expect(installs > 10)
            #expect(line.hasPrefix("ok rounds="))
            #expect(line.contains(" partial=0 "), "reader saw a partial ring: \(line)")
            #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == last)
        }
    }

    @Test("root: a persistent-keyring grant is readable by the service uid from a fresh session, by nobody else")
    func persistentGrant() throws {
        try withTwoUsers { service, other in
            let report = try layout.grant(uid: service.uid, items: [try testItem(service: "db", account: "svc")])
            #expect(report.loaded == 1)
            let item = try #require(try report.ring.links().first).rawValue
            #expect(try service.probe("service-read", "arca:genp:db:svc") == "ok " + hex("secret-svc"))
            #expect(try other.probe("service-read", "arca:genp:db:svc") == "error ENOKEY")
            #expect(try other.probe("read-serial", "\(item)") == "error EACCES")
            #expect(try other.probe("describe", "\(item)") == "error EACCES")
            // A plain user read (without the persistent keyring) does not see service items.
            #expect(try service.probe("read", "fresh", "arca:genp:db:svc") == "error ENOKEY")
            // Re-granting replaces the ring; refresh keeps it; revoke wipes it.
            let again = try layout.grant(uid: service.uid, items: [try testItem(service: "db", account: "svc2")])
            #expect(try service.probe("service-read", "arca:genp:db:svc") == "error ENOKEY")
            #expect(try service.probe("service-read", "arca:genp:db:svc2") == "ok " + hex("secret-svc2"))
            try layout.refresh(uid: service.uid)
            #expect(try layout.revoke(uid: service.uid) == 1)
            #expect(try service.probe("service-read", "arca:genp:db:svc2") == "error ENOKEY")
            #expect(try !procKeysSerials().contains(again.ring.rawValue) || (try? again.ring.describe()) == nil)
        }
    }

    @Test("root: items too large or duplicated are reported as not loaded, the rest load")
    func notLoadable() throws {
        try withTwoUsers { owner, _ in
            let big = KeyringItem(
                key: .genericPassword(GenericPasswordKey(service: "big", account: "x")),
                secret: try SecretBytes.random(count: 32_768))
            let largest = KeyringItem(
                key: .genericPassword(GenericPasswordKey(service: "big", account: "max")),
                secret: try SecretBytes.random(count: 32_767))
            let longName = KeyringItem(
                key: .genericPassword(GenericPasswordKey(service: String(repeating: "s", count: 4_100), account: "x")),
                secret: try secret("x"))
            let items = [
                try testItem(service: "m", account: "a"), big, largest, longName,
                try testItem(service: "m", account: "a"),
            ]
            let report = try layout.install(user: owner.uid, class: .whenUnlocked, items: items)
            #expect(report.loaded == 2)
            #expect(
                report.notLoaded.map(\.reason) == [
                    .payloadTooLarge(bytes: 32_768), .descriptionTooLong(bytes: 4_112), .duplicate,
                ])
            let read = try #require(try layout.ring(user: owner.uid, class: .whenUnlocked)).links()
            #expect(read.count == 2)
        }
    }
}

/// The removal deadline holds a stopwatch over the kernel's key collector: `make
/// unit` runs suites whose type ends in TimingTests alone, after the parallel run.
@Suite("Kernel keyring removal timing (root, real kernel)", .serialized)
struct KeyringRemovalTimingTests {
    let layout = KeyringLayout()

    @Test("root: after remove every key of the class leaves /proc/keys within 100 ms; readers get ENOKEY")
    func removeWipes() throws {
        try withTwoUsers { owner, _ in
            let items = try (0..<50).map { try testItem(service: "mail", account: "a\($0)") }
            let report = try layout.install(user: owner.uid, class: .whenUnlocked, items: items)
            let kept = try layout.install(
                user: owner.uid, class: .afterFirstUnlock, items: [try testItem(service: "vpn", account: "k")])
            let serials = Set([report.ring.rawValue] + (try report.ring.links().map(\.rawValue)))
            #expect(serials.count == 51)
            #expect(try procKeysSerials().isSuperset(of: serials))
            let oneItem = try #require(try report.ring.links().first)

            let start = Clock.monotonicSeconds()
            let removed = try layout.remove(user: owner.uid, class: .whenUnlocked)
            var elapsed = 0.0
            while try !procKeysSerials().isDisjoint(with: serials) {
                elapsed = Clock.monotonicSeconds() - start
                if elapsed > 1 { break }
                usleep(5_000)  // poll lightly: the kernel's collector needs the CPU, not us
            }
            elapsed = Clock.monotonicSeconds() - start
            #expect(removed == 50)
            #expect(try procKeysSerials().isDisjoint(with: serials))
            #expect(elapsed < 0.100, "keys took \(Int(elapsed * 1000)) ms to leave /proc/keys")

            #expect(try owner.probe("read", "none", "arca:genp:mail:a0") == "error ENOKEY")
            let stale = try owner.probe("read-serial", "\(oneItem.rawValue)")
            #expect(stale == "error ENOKEY" || stale == "error EKEYREVOKED")
            #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == nil)
            // The other class is untouched.
            #expect(try layout.ring(user: owner.uid, class: .afterFirstUnlock) == kept.ring)
            #expect(try owner.probe("read", "none", "arca:genp:vpn:k") == "ok " + hex("secret-k"))
            #expect(try layout.remove(user: owner.uid, class: .whenUnlocked) == 0)
        }
    }
}
