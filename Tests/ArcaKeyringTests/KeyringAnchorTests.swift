import ArcaCrypto
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaKeyring

/// The anchor (`UserKeyringAnchor`): after the first ring, a uid's rings are linked
/// into its `@u` without the uid-switch child, and no trick with that `@u` (or with
/// a serial the process remembers) sends a ring anywhere but into the owner's `@u`.
@Suite("User keyring anchor (root, real kernel)", .serialized)
struct KeyringAnchorTests {
    /// Runs `body` with an anchored layout and two throwaway users. The holder's place
    /// is a fresh keyring in this thread's keyring (arcad uses its private session
    /// keyring), unlinked afterwards, which lets the holder and anchor die.
    func withAnchoredLayout(
        farUids: Bool = false, _ body: (KeyringLayout, KeySerial, TestUser, TestUser) throws -> Void
    ) throws {
        let place = try KeySerial.add(type: "keyring", description: "arca-test:place", payload: nil, to: .threadKeyring)
        defer {
            try? place.clear()
            try? place.unlink(from: .threadKeyring)
        }
        let layout = KeyringLayout(anchorIn: place)
        try withTwoUsers(farUids: farUids) { try body(layout, place, $0, $1) }
    }

    /// Installs one item (secret "secret-<account>") as `uid`'s ring of `itemClass`.
    @discardableResult
    func install(
        _ layout: KeyringLayout, _ uid: UInt32, _ service: String, _ account: String,
        class itemClass: KeyringClass = .whenUnlocked
    ) throws -> LoadReport {
        try layout.install(user: uid, class: itemClass, items: [try testItem(service: service, account: account)])
    }

    /// How many rings `layout` has published for `uid` through the child.
    func childPublications(_ layout: KeyringLayout, _ uid: UInt32) -> Int {
        layout.ledger.withUser(uid) { $0.childPublications }
    }

    func anchored(_ layout: KeyringLayout, _ uid: UInt32) -> KeySerial? {
        layout.ledger.withUser(uid) { $0.userKeyring }
    }

    /// The keyrings the anchor links (this thread possesses it only meanwhile).
    func anchorLinks(_ layout: KeyringLayout) throws -> [KeySerial] {
        try possessing(layout) { try $0.links() }
    }

    /// What `keyring` links, read while this thread possesses the anchor (root may
    /// read a user's @u only as its possessor).
    func links(of keyring: KeySerial, _ layout: KeyringLayout) throws -> [KeySerial] {
        try possessing(layout) { _ in try keyring.links() }
    }

    func possessing<R>(_ layout: KeyringLayout, _ body: (KeySerial) throws -> R) throws -> R {
        let holder = try #require(layout.anchor)
        let anchor = try holder.possess()
        defer { holder.release(possession: anchor) }
        return try body(anchor)
    }

    /// The serial of `uid`'s `@u` as the kernel resolves it for that uid.
    func userKeyring(_ uid: UInt32) throws -> KeySerial {
        KeySerial(rawValue: try UserKeyringSwitch.run(uid: uid, find: nil).userKeyring)
    }

    @Test("root: only a uid's first ring goes through the child; the rest are linked into the same @u directly")
    func secondRingWithoutChild() throws {
        try withAnchoredLayout { layout, _, owner, _ in
            let first = try install(layout, owner.uid, "mail", "a0")
            #expect(childPublications(layout, owner.uid) == 1)
            let home = try userKeyring(owner.uid)
            #expect(anchored(layout, owner.uid) == home)
            #expect(try anchorLinks(layout).contains(home))

            let afu = try install(layout, owner.uid, "vpn", "a1", class: .afterFirstUnlock)
            let second = try install(layout, owner.uid, "mail", "a2")
            #expect(childPublications(layout, owner.uid) == 1)
            #expect(try layout.ring(user: owner.uid, class: .afterFirstUnlock) == afu.ring)
            #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == second.ring)
            #expect(second.ring != first.ring)
            #expect(Set(try links(of: home, layout)) == [afu.ring, second.ring])
            #expect(try owner.probe("read", "fresh", "arca:genp:mail:a2") == "ok " + hex("secret-a2"))
            #expect(try owner.probe("read", "fresh", "arca:genp:vpn:a1") == "ok " + hex("secret-a1"))
            #expect(try owner.probe("read", "fresh", "arca:genp:mail:a0") == "error ENOKEY")
        }
    }

    @Test("attack: the user invalidates their own @u; the next ring goes through the child into the new @u")
    func userInvalidatesUserKeyring() throws {
        // Far uids: the kernel keeps the uid's user-session keyring (@us) until reboot,
        // and after the invalidation it no longer links the new @u (repaired below), so
        // this uid must not come back soon for another test.
        try withAnchoredLayout(farUids: true) { layout, _, owner, _ in
            try install(layout, owner.uid, "mail", "a0")
            let old = try #require(anchored(layout, owner.uid))
            #expect(try owner.run(["keyctl", "invalidate", "@u"]).status == 0)
            // Until the kernel's garbage collector has dropped the invalidated @u, no new
            // one can be made for the uid (the child gets ENOKEY, as it did before the
            // anchor): wait for it, at most 2 s.
            for _ in 0..<200 where (try? UserKeyringSwitch.run(uid: owner.uid, find: nil)) == nil { usleep(10_000) }

            let report = try install(layout, owner.uid, "mail", "a1")
            #expect(report.loaded == 1)
            #expect(childPublications(layout, owner.uid) == 2)
            let home = try userKeyring(owner.uid)
            #expect(home != old)
            #expect(anchored(layout, owner.uid) == home)
            #expect(try links(of: home, layout) == [report.ring])
            #expect(try owner.probe("read", "fresh", "arca:genp:mail:a1") == "ok " + hex("secret-a1"))
            // What the user broke for themselves: @us lost its link to @u.
            #expect(try owner.run(["keyctl", "link", "@u", "@us"]).status == 0)
        }
    }

    @Test("attack: the user takes the possessor's write away from @u; the child is asked and fails; old ring gone")
    func userRevokesPossessorWrite() throws {
        try withAnchoredLayout { layout, _, owner, _ in
            let first = try install(layout, owner.uid, "mail", "a0")
            #expect(try owner.run(["keyctl", "setperm", "@u", "0x003f0000"]).status == 0)
            // The child cannot even resolve @u now: without the possessor's view and search
            // the kernel answers ENOKEY, before any link is tried.
            #expect(throws: KeyringError.system(.noKey, operation: "keyctl_get_keyring_ID(@u)")) {
                try install(layout, owner.uid, "mail", "a1")
            }
            // The direct link failed (no possessor write), so the child was asked, and failed too.
            #expect(childPublications(layout, owner.uid) == 2)
            #expect(throws: KeyringErrno.noKey) { try first.ring.describe() }
            #expect(try owner.probe("read", "fresh", "arca:genp:mail:a0") == "error ENOKEY")
        }
    }

    @Test("attack: a remembered @u serial that now names another user's @u or a root ring is never linked into")
    func staleSerialNeverFollowed() throws {
        try withAnchoredLayout { layout, _, owner, other in
            // Both users' @u are anchored: this process possesses the other's @u too.
            let otherRing = try install(layout, other.uid, "web", "b0")
            try install(layout, owner.uid, "mail", "a0")
            let otherHome = try #require(anchored(layout, other.uid))
            // The kernel reused a freed serial: the owner's remembered @u is now the other
            // user's @u, then a root-owned ring (the other's arca:wu).
            for (index, stale) in [otherHome, otherRing.ring].enumerated() {
                layout.ledger.withUser(owner.uid) { $0.userKeyring = stale }
                let report = try install(layout, owner.uid, "mail", "a\(index + 1)")
                #expect(childPublications(layout, owner.uid) == 2 + index)
                #expect(try !links(of: stale, layout).contains(report.ring), "linked into \(stale)")
                #expect(try layout.ring(user: owner.uid, class: .whenUnlocked) == report.ring)
                #expect(anchored(layout, owner.uid) == (try userKeyring(owner.uid)))
                #expect(try other.probe("read", "fresh", "arca:genp:mail:a\(index + 1)") == "error ENOKEY")
                #expect(try other.probe("read", "fresh", "arca:genp:web:b0") == "ok " + hex("secret-b0"))
                #expect(
                    try owner.probe("read", "fresh", "arca:genp:mail:a\(index + 1)") == "ok "
                        + hex("secret-a\(index + 1)"))
            }
        }
    }

    @Test("attack: the anchor gives nobody else the users' @u: not a root child process, not another user")
    func anchorStaysInProcess() throws {
        try withAnchoredLayout { layout, place, owner, other in
            let report = try install(layout, owner.uid, "mail", "a0")
            let home = try #require(anchored(layout, owner.uid))
            // Possession ends with the publication: the thread keyring holds only the
            // place again (the holder in it lets no search through), and this thread
            // may not write the owner's @u any more.
            #expect(try KeySerial.threadKeyring.links() == [place])
            #expect(throws: KeyringErrno.permissionDenied) { try report.ring.link(into: home) }
            let holder = try #require(layout.anchor)
            let anchor = try holder.possess()
            defer { holder.release(possession: anchor) }
            #expect(try anchor.describe().permissions == 0x3f15_0000)
            // The holder grants no search, to anyone: whoever possesses it (this thread,
            // through the place) reaches nothing through it.
            let holderKey = try #require(try place.links().first)
            #expect(try place.links().count == 1)
            let described = try holderKey.describe()
            #expect(described.description == UserKeyringAnchor.holderDescription)
            #expect(described.uid == 0 && described.permissions == 0x0007_0000)
            #expect(try holderKey.links() == [anchor])
            #expect(throws: KeyringErrno.permissionDenied) {
                try holderKey.search(type: "keyring", description: "_uid.\(owner.uid)")
            }
            // A root process started from this one (fork + exec) does not possess the
            // owner's @u either, so root may not write it.
            let child = try run(["keyctl", "link", "\(report.ring.rawValue)", "\(home.rawValue)"])
            #expect(child.status == 1 && child.stderr.hasSuffix("Permission denied"), "\(child)")
            // Another user reaches neither the anchor nor, through it, the owner's @u.
            #expect(try other.probe("describe", "\(anchor.rawValue)") == "error EACCES")
            #expect(try other.probe("search", "\(anchor.rawValue)", "keyring", "_uid.\(owner.uid)") == "error EACCES")
            #expect(try other.probe("link", "\(anchor.rawValue)", "s") == "error EACCES")
            #expect(try other.probe("describe", "\(home.rawValue)") == "error EACCES")
        }
    }

    @Test("root: purge lets go of the uid's @u (the anchor no longer links it)")
    func purgeReleases() throws {
        try withAnchoredLayout { layout, _, owner, _ in
            try install(layout, owner.uid, "mail", "a0")
            let home = try #require(anchored(layout, owner.uid))
            #expect(try anchorLinks(layout).contains(home))
            let purged = layout.purge(user: owner.uid)
            #expect(purged.failures == [])
            #expect(try !anchorLinks(layout).contains(home))
            #expect(anchored(layout, owner.uid) == nil)
        }
    }
}
