import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// System services against the real kernel (ARCHITECTURE §8): throwaway service
/// users read their grants from their persistent keyring in a fresh session
/// keyring (as systemd's KeyringMode=private gives), and systemd's
/// LoadCredential= protocol is played by arcad-probe.
@Suite("arcad binary: system services (root, real kernel)", .serialized)
struct SystemServiceTests {
    static let description = "arca:genp:postgresql:postgres"
    static let pg: AttributeMap = [.service: .string("postgresql"), .account: .string("postgres")]
    static let pgQuery = Query(itemClass: .genericPassword, attributes: pg)

    static func addSystem(_ secret: String) -> Request {
        .add(AddRequest(vault: .system, itemClass: .genericPassword, attributes: pg, secret: Array(secret.utf8)))
    }

    func purge(_ user: TestUser) { _ = KeyringLayout().purge(user: user.uid) }

    /// What `user` reads from its persistent keyring in a fresh session: "ok <hex>" or "error …".
    func serviceRead(_ user: TestUser) throws -> String {
        try user.run([builtExecutable("arca-keyring-probe"), "service-read", Self.description]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// systemd's side of LoadCredential=, run as `user` (nil: root).
    func loadCredential(_ arcad: ArcadProcess, unit: String, id: String, as user: TestUser? = nil) throws -> String {
        let argv = [builtExecutable("arcad-probe"), arcad.directory + "/credentials.sock", "credential", unit, id]
        let result = try user.map { try $0.run(argv) } ?? run(argv)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("a granted user reads its secret from the kernel and the socket; another cannot; revoke empties the kernel")
    func userGrant() throws {
        try withThrowawayUsers(2, prefix: "arcas", cleanup: purge) { users in
            let (service, other) = (users[0], users[1])
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(FileManager.default.fileExists(atPath: arcad.directory + "/state/system.db"))
            #expect(try arcad.send(Self.addSystem("s3cret")) == .items([]))
            #expect(try serviceRead(service) == "error ENOKEY")
            #expect(try arcad.send(.grant(query: Self.pgQuery, principals: [.user(service.uid)])) == .ok)
            #expect(try serviceRead(service) == "ok " + hex("s3cret"))
            #expect(try serviceRead(other) == "error ENOKEY")
            #expect(try service.probe(arcad.socket, "system-get") == "ok s3cret")
            #expect(try other.probe(arcad.socket, "system-get") == "error -25300 no such item")
            // A non-root caller cannot grant itself.
            #expect(try other.probe(arcad.socket, "add", "0", "x", "y", stdin: "z\n").hasPrefix("error -34018"))

            // The ring's key is gone from the kernel the moment revoke answers.
            let serial = try #require(try persistentKeySerial(service))
            let before = try run([builtExecutable("arca-keyring-probe"), "read-serial", serial]).stdout
            #expect(before == "ok \(hex("s3cret"))")
            #expect(try arcad.send(.revokeGrant(query: Self.pgQuery, principals: [])) == .ok)
            #expect(try serviceRead(service) == "error ENOKEY")
            // Root owns the key and may read it while it exists: now it does not.
            #expect(try run([builtExecutable("arca-keyring-probe"), "read-serial", serial]).stdout.hasPrefix("error"))
            #expect(try service.probe(arcad.socket, "system-get") == "error -25300 no such item")

            // Deleting a granted item removes it from the kernel too.
            #expect(try arcad.send(.grant(query: Self.pgQuery, principals: [.user(service.uid)])) == .ok)
            #expect(try serviceRead(service) == "ok " + hex("s3cret"))
            #expect(try arcad.send(.delete(vault: .system, query: Self.pgQuery)) == .ok)
            #expect(try serviceRead(service) == "error ENOKEY")
        }
    }

    @Test("a group grant is read by the group's members only")
    func groupGrant() throws {
        try withThrowawayUsers(2, prefix: "arcag", cleanup: purge) { users in
            let (member, outsider) = (users[0], users[1])
            let group = "arcag" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
            try #require(run(["groupadd", group]).status == 0)
            defer { _ = try? run(["groupdel", group]) }
            try #require(run(["usermod", "-aG", group, member.name]).status == 0)
            let gid = try #require(UInt32(try run(["getent", "group", group]).stdout.split(separator: ":")[2]))
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(try arcad.send(Self.addSystem("g-secret")) == .items([]))
            #expect(try arcad.send(.grant(query: Self.pgQuery, principals: [.group(gid)])) == .ok)
            #expect(try serviceRead(member) == "ok " + hex("g-secret"))
            #expect(try serviceRead(outsider) == "error ENOKEY")
            // Over the socket, the groups the caller's process has decide (SO_PEERGROUPS).
            func systemGet(_ user: TestUser, _ groups: String) throws -> String {
                try run([
                    "setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", groups,
                    builtExecutable("arcad-probe"), arcad.socket, "system-get",
                ]).stdout
            }
            #expect(try systemGet(member, "--init-groups") == "ok g-secret")
            #expect(try systemGet(member, "--groups=\(gid)") == "ok g-secret")
            #expect(try outsider.probe(arcad.socket, "system-get") == "error -25300 no such item")
            #expect(try systemGet(outsider, "--init-groups") == "error -25300 no such item")
        }
    }

    @Test("attack: a member that dropped the group from its process loses the group's grant")
    func droppedGroup() throws {
        try withThrowawayUsers(1, prefix: "serverdg", cleanup: purge) { users in
            let member = users[0]
            let group = "serverdg" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
            let other = group + "o"
            for name in [group, other] { try #require(run(["groupadd", name]).status == 0) }
            defer { for name in [group, other] { _ = try? run(["groupdel", name]) } }
            try #require(run(["usermod", "-aG", "\(group),\(other)", member.name]).status == 0)
            let gid = try #require(UInt32(try run(["getent", "group", group]).stdout.split(separator: ":")[2]))
            let otherGID = try #require(UInt32(try run(["getent", "group", other]).stdout.split(separator: ":")[2]))
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(try arcad.send(Self.addSystem("g-secret")) == .items([]))
            #expect(try arcad.send(.grant(query: Self.pgQuery, principals: [.group(gid)])) == .ok)
            func systemGet(_ groups: String) throws -> String {
                try run([
                    "setpriv", "--reuid=\(member.uid)", "--regid=\(member.gid)", groups,
                    builtExecutable("arcad-probe"), arcad.socket, "system-get",
                ]).stdout
            }
            // The group database still lists the member; its process no longer has the group.
            #expect(try systemGet("--init-groups") == "ok g-secret")
            #expect(try systemGet("--clear-groups") == "error -25300 no such item")
            #expect(try systemGet("--groups=\(otherGID)") == "error -25300 no such item")
        }
    }

    @Test("LoadCredential=: root from systemd's abstract address gets the secret; others get nothing")
    func credentialsSocket() throws {
        try withThrowawayUsers(1, prefix: "arcac", cleanup: purge) { users in
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(try arcad.send(Self.addSystem("cred")) == .items([]))
            #expect(
                try arcad.send(
                    .grant(
                        query: Self.pgQuery,
                        principals: [
                            .unit(name: "postgresql.service", credential: "db-password")
                        ])) == .ok)
            #expect(try loadCredential(arcad, unit: "postgresql.service", id: "db-password") == "ok cred")
            #expect(try loadCredential(arcad, unit: "postgresql.service", id: "other") == "ok")
            #expect(try loadCredential(arcad, unit: "evil.service", id: "db-password") == "ok")
            #expect(try loadCredential(arcad, unit: "postgresql.service", id: "db-password", as: users[0]) == "ok")
            // A unit grant gives nothing over the request socket or in the kernel.
            #expect(
                try arcad.send(
                    .copyMatching(
                        vault: .system,
                        query: Query(
                            itemClass: .genericPassword, attributes: Self.pg, returnFlags: .data))) != .items([]))
        }
    }

    @Test("an arcad restart keeps and re-delivers the grants")
    func restart() throws {
        try withThrowawayUsers(1, prefix: "arcar", cleanup: purge) { users in
            let service = users[0]
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(try arcad.send(Self.addSystem("kept")) == .items([]))
            #expect(
                try arcad.send(
                    .grant(
                        query: Self.pgQuery,
                        principals: [
                            .user(service.uid), .unit(name: "pg.service", credential: "pw"),
                        ])) == .ok)
            arcad.kill9()
            // Even a keyring emptied while arcad was down is refilled at start.
            _ = try KeyringLayout().revoke(uid: service.uid)
            #expect(try serviceRead(service) == "error ENOKEY")
            try arcad.start()
            #expect(try serviceRead(service) == "ok " + hex("kept"))
            #expect(try service.probe(arcad.socket, "system-get") == "ok kept")
            #expect(try loadCredential(arcad, unit: "pg.service", id: "pw") == "ok kept")
            #expect(
                try arcad.send(.listGrants)
                    == .grants([
                        GrantEntry(
                            service: "postgresql", account: "postgres", label: nil,
                            principals: [.user(service.uid), .unit(name: "pg.service", credential: "pw")])
                    ]))
        }
    }

    @Test("the refresh timer keeps the persistent keyring alive past its expiry")
    func refresh() throws {
        let path = "/proc/sys/kernel/keys/persistent_keyring_expiry"
        // An expired keyring is collected only gc_delay (300 s) later, and until then
        // keyctl_get_persistent revives it: lower both, so that expiry bites.
        let gcPath = "/proc/sys/kernel/keys/gc_delay"
        // One run at a time on the machine (two checkouts testing at once): a second run would
        // save the first one's 4 s as "the" value and restore it for good, after which every
        // service keyring on the machine expires within seconds (80-fleet failed on that).
        let lock = open("/run/lock/arca-test-persistent-keyring-expiry.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(lock >= 0)
        defer { close(lock) }
        try #require(flock(lock, LOCK_EX) == 0)
        let saved = try String(contentsOfFile: path, encoding: .utf8)
        let savedGC = try String(contentsOfFile: gcPath, encoding: .utf8)
        // Restored even when an expectation fails or something throws.
        defer {
            try? saved.write(toFile: path, atomically: false, encoding: .utf8)
            try? savedGC.write(toFile: gcPath, atomically: false, encoding: .utf8)
        }
        try "4\n".write(toFile: path, atomically: false, encoding: .utf8)
        try "1\n".write(toFile: gcPath, atomically: false, encoding: .utf8)
        try withThrowawayUsers(2, prefix: "arcaf", cleanup: purge) { users in
            let (kept, control) = (users[0], users[1])
            // arcad reads the expiry at start: it refreshes every 2 s.
            let arcad = try ArcadProcess(config: "")
            defer { arcad.stop() }
            #expect(try arcad.send(Self.addSystem("alive")) == .items([]))
            #expect(try arcad.send(.grant(query: Self.pgQuery, principals: [.user(kept.uid)])) == .ok)
            // The control: the same ring placed by hand, never refreshed, expires.
            let item = KeyringItem(
                key: .genericPassword(GenericPasswordKey(service: "postgresql", account: "postgres")),
                secret: try Array("alive".utf8).withUnsafeBytes { try SecretBytes(copying: $0) })
            _ = try KeyringLayout().grant(uid: control.uid, items: [item])
            #expect(try serviceRead(control) == "ok " + hex("alive"))
            sleep(9)
            #expect(try serviceRead(kept) == "ok " + hex("alive"))
            // The control's persistent keyring expired, and its secret with it.
            let expired = try serviceRead(control)
            #expect(expired.hasPrefix("error"), "control read \(expired)")
        }
    }

    /// The serial of the granted key, as the user finds it.
    func persistentKeySerial(_ user: TestUser) throws -> String? {
        let out = try user.run([builtExecutable("arca-keyring-probe"), "service-serial", Self.description]).stdout
        guard out.hasPrefix("ok ") else { return nil }
        return String(out.dropFirst(3)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
