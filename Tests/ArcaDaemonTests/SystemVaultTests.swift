import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaDaemon

/// The system vault and its grants, over the kernel twin (the real kernel is
/// exercised by ArcadTests/SystemServiceTests).
@Suite("in-process arcad: system vault (root)")
struct SystemVaultTests {
    static let pg = genp("postgresql", "postgres")
    static let pgQuery = Query(itemClass: .genericPassword, attributes: pg)
    static let pgDescription = "arca:genp:postgresql:postgres"

    static func addSystem(_ attributes: AttributeMap, _ secret: String) -> Request {
        .add(
            AddRequest(vault: .system, itemClass: .genericPassword, attributes: attributes, secret: Array(secret.utf8)))
    }

    static let getSystem = Request.copyMatching(
        vault: .system, query: Query(itemClass: .genericPassword, attributes: pg, returnFlags: [.data, .attributes]))

    @Test("system.db is created at start; root writes; only granted uids read; revoke empties the kernel")
    func grantAndRevoke() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(FileManager.default.fileExists(atPath: t.directory + "/system.db"))
        #expect(statusCode(t.send(Self.addSystem(Self.pg, "pw"), as: 60_001)) == -34018)
        #expect(t.send(Self.addSystem(Self.pg, "s3cret"), as: 0) == .items([]))
        // Nobody granted yet: a service sees nothing, root sees the item.
        #expect(statusCode(t.send(Self.getSystem, as: 60_001)) == -25300)
        #expect(
            secretText(
                t.send(
                    .copyMatching(
                        vault: .system,
                        query: Query(
                            itemClass: .genericPassword, attributes: Self.pg, returnFlags: .data)), as: 0)) == "s3cret")
        #expect(t.kernel.service(60_001) == nil)

        #expect(statusCode(t.send(.grant(query: Self.pgQuery, principals: [.user(60_001)]), as: 60_001)) == -34018)
        #expect(t.send(.grant(query: Self.pgQuery, principals: [.user(60_001)]), as: 0) == .ok)
        #expect(t.kernel.service(60_001) == [Self.pgDescription: "s3cret"])
        #expect(t.kernel.service(60_002) == nil)
        // The granted uid reads over the socket; the grant record never leaves arcad.
        guard case .items(let items) = t.send(Self.getSystem, as: 60_001), items.count == 1 else {
            Issue.record("no item for the granted uid")
            return
        }
        #expect(items[0].data == Array("s3cret".utf8))
        #expect(items[0].attributes[.generic] == nil)
        #expect(items[0].attributes[.service] == .string("postgresql"))
        #expect(statusCode(t.send(Self.getSystem, as: 60_002)) == -25300)
        #expect(statusCode(t.send(Self.addSystem(Self.pg, "x"), as: 60_001)) == -34018)
        #expect(statusCode(t.send(.delete(vault: .system, query: Self.pgQuery), as: 60_001)) == -34018)

        #expect(
            t.send(.listGrants, as: 0)
                == .grants([
                    GrantEntry(service: "postgresql", account: "postgres", label: nil, principals: [.user(60_001)])
                ]))
        #expect(statusCode(t.send(.listGrants, as: 60_001)) == -34018)

        // An update of the secret reaches the kernel at once.
        #expect(
            t.send(
                .update(
                    UpdateRequest(
                        vault: .system, query: Self.pgQuery, attributes: [:],
                        secret: Array("new".utf8))), as: 0) == .ok)
        #expect(t.kernel.service(60_001) == [Self.pgDescription: "new"])

        #expect(t.send(.revokeGrant(query: Self.pgQuery, principals: [.user(60_001)]), as: 0) == .ok)
        #expect(t.kernel.service(60_001) == nil)
        #expect(statusCode(t.send(Self.getSystem, as: 60_001)) == -25300)
        #expect(t.send(.listGrants, as: 0) == .grants([]))
    }

    @Test("deleting a granted item revokes it from the kernel; other grants stay")
    func deleteRevokes() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let other = genp("redis", "default")
        #expect(t.send(Self.addSystem(Self.pg, "a"), as: 0) == .items([]))
        #expect(t.send(Self.addSystem(other, "b"), as: 0) == .items([]))
        #expect(
            t.send(
                .grant(
                    query: Query(itemClass: .genericPassword, matchLimit: .all),
                    principals: [.user(60_001)]), as: 0) == .ok)
        #expect(t.kernel.service(60_001) == [Self.pgDescription: "a", "arca:genp:redis:default": "b"])
        #expect(t.send(.delete(vault: .system, query: Self.pgQuery), as: 0) == .ok)
        #expect(t.kernel.service(60_001) == ["arca:genp:redis:default": "b"])
        #expect(
            t.send(.delete(vault: .system, query: Query(itemClass: .genericPassword, attributes: other)), as: 0)
                == .ok)
        #expect(t.kernel.service(60_001) == nil)
    }

    @Test("a group grant reaches the group's members (daemon, uid 1, primary group 1)")
    func groupGrant() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(t.send(Self.addSystem(Self.pg, "g"), as: 0) == .items([]))
        #expect(t.send(.grant(query: Self.pgQuery, principals: [.group(1)]), as: 0) == .ok)
        #expect(t.kernel.service(1) == [Self.pgDescription: "g"])
        var request = Self.getSystem
        #expect(secretText(t.daemon.handle(&request, from: PeerCredentials(pid: 1, uid: 1, gid: 1))) == "g")
        #expect(statusCode(t.send(Self.getSystem, as: 60_001)) == -25300)
    }

    @Test("the refresh timer notices a group gaining and losing a member")
    func groupMembershipChanges() throws {
        try withThrowawayUsers(1, prefix: "arcam") { users in
            let user = users[0]
            let group = "arcam" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
            try #require(run(["groupadd", group]).status == 0)
            defer { _ = try? run(["groupdel", group]) }
            let gid = try #require(UInt32(try run(["getent", "group", group]).stdout.split(separator: ":")[2]))
            let t = try TestDaemon()
            defer { t.cleanUp() }
            #expect(t.send(Self.addSystem(Self.pg, "m"), as: 0) == .items([]))
            #expect(t.send(.grant(query: Self.pgQuery, principals: [.group(gid)]), as: 0) == .ok)
            #expect(t.kernel.service(user.uid) == nil)
            try #require(run(["usermod", "-aG", group, user.name]).status == 0)
            t.daemon.refreshSystemGrants()
            #expect(t.kernel.service(user.uid) == [Self.pgDescription: "m"])
            try #require(run(["gpasswd", "-d", user.name, group]).status == 0)
            t.daemon.refreshSystemGrants()
            #expect(t.kernel.service(user.uid) == nil)
        }
    }

    @Test("a restart re-grants everything from system.db")
    func restart() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        #expect(t.send(Self.addSystem(Self.pg, "kept"), as: 0) == .items([]))
        #expect(
            t.send(
                .grant(
                    query: Self.pgQuery,
                    principals: [
                        .user(60_003),
                        .unit(
                            name: "postgresql.service", credential: "db-password"),
                    ]), as: 0) == .ok)
        let second = try t.restarted()
        #expect(second.kernel.service(60_003) == nil)
        second.daemon.deliverSystemGrants()
        #expect(second.kernel.service(60_003) == [Self.pgDescription: "kept"])
        #expect(secretText(second.send(Self.getSystem, as: 60_003)) == "kept")
        let credential = second.daemon.credential(unit: "postgresql.service", id: "db-password")
        #expect(credential?.withUnsafeBytes { Array($0) } == Array("kept".utf8))
        #expect(second.daemon.credential(unit: "postgresql.service", id: "other") == nil)
        #expect(second.daemon.credential(unit: "evil.service", id: "db-password") == nil)
    }

    @Test("kSecAttrGeneric is reserved; system items are generic passwords; unit names are checked")
    func refusals() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        var withGeneric = Self.pg
        withGeneric[.generic] = .bytes([1])
        #expect(statusCode(t.send(Self.addSystem(withGeneric, "x"), as: 0)) == -50)
        #expect(
            statusCode(
                t.send(
                    .add(
                        AddRequest(
                            vault: .system, itemClass: .internetPassword, attributes: [.server: .string("db")],
                            secret: [1])), as: 0))
                == -50)
        #expect(t.send(Self.addSystem(Self.pg, "x"), as: 0) == .items([]))
        #expect(
            statusCode(
                t.send(
                    .grant(query: Self.pgQuery, principals: [.unit(name: "a/b", credential: "id")]),
                    as: 0)) == -50)
        #expect(
            statusCode(
                t.send(
                    .grant(query: Self.pgQuery, principals: [.unit(name: "a", credential: "")]),
                    as: 0)) == -50)
        #expect(
            statusCode(
                t.send(
                    .grant(
                        query: Query(itemClass: .genericPassword, attributes: genp("no", "such")),
                        principals: [.user(5)]), as: 0)) == -25300)
    }

    @Test("the credentials socket's peer address: \\0<random>/unit/<unit>/<id> only")
    func peerAddress() {
        func parse(_ s: String, abstract: Bool = true) -> [String]? {
            CredentialServer.unitAndID(address: (abstract ? [0] : []) + Array(s.utf8)).map { [$0.0, $0.1] }
        }
        #expect(parse("f00d/unit/postgresql.service/db-password") == ["postgresql.service", "db-password"])
        #expect(parse("f00d/unit/postgresql.service/db-password", abstract: false) == nil)
        #expect(parse("f00d/unit/postgresql.service") == nil)
        #expect(parse("f00d/unit/a/b/c") == nil)
        #expect(parse("/unit/a/b") == nil)
        #expect(parse("f00d/user/a/b") == nil)
        #expect(parse("f00d/unit//b") == nil)
        #expect(CredentialServer.unitAndID(address: [0] + Array("r/unit/a/b".utf8) + [0]) == nil)
    }

    @Test("grant records round-trip; anything else reads as no grant")
    func codec() {
        let principals: [Principal] = [.user(7), .group(.max), .unit(name: "pg.service", credential: "pw")]
        #expect(GrantCodec.decode(GrantCodec.encode(principals)) == principals)
        #expect(GrantCodec.decode(GrantCodec.encode([])) == [])
        #expect(GrantCodec.decode(nil) == [])
        #expect(GrantCodec.decode(Array("user data".utf8)) == [])
    }
}
