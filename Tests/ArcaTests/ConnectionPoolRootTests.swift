import ArcaClient
import ArcaLibTestSupport
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// The library's connection pool never lends a connection to another process or
/// to other credentials: arcad decided who the connection speaks for when it was
/// made. The attacks run in arca-lib-probe (one thread, so fork is safe there),
/// as root, on a system item granted to nobody: only root reads it.
@Suite(.serialized) struct ConnectionPoolRootTests {
    /// Adds the system item (service, "k") = "root-only", granted to nobody; runs `body`; deletes it.
    func withRootOnlyItem(_ body: (String, String) throws -> Void) throws {
        let socket = try LiveArcad.socketPath()
        let service = "arca.pool.\(UUID().uuidString)"
        let client = try ArcadClient(path: socket)
        let attributes: AttributeMap = [.service: .string(service), .account: .string("k")]
        #expect(
            try client.send(
                .add(
                    AddRequest(
                        vault: .system, itemClass: .genericPassword, attributes: attributes,
                        secret: Array("root-only".utf8))))
                == .items([]))
        defer {
            _ = try? client.send(
                .delete(vault: .system, query: Query(itemClass: .genericPassword, attributes: attributes)))
        }
        try body(socket, service)
    }

    @Test func aProcessThatDroppedRootNoLongerSpeaksAsRoot_root() throws {
        try withThrowawayUsers(1, prefix: "serverpl") { users in
            try withRootOnlyItem { socket, service in
                let run = try ArcaTestSupport.run([
                    builtExecutable("arca-lib-probe"), socket, "pool-setuid", service, "\(users[0].uid)",
                    "\(users[0].gid)",
                ])
                // Before the fix the pooled root connection answered the second read too.
                #expect(run.stdout == "root: root-only\nafter setuid: nil", "\(run)")
            }
        }
    }

    @Test func aForkedChildOpensItsOwnConnection_root() throws {
        try withRootOnlyItem { socket, service in
            let run = try ArcaTestSupport.run([builtExecutable("arca-lib-probe"), socket, "pool-fork", service])
            #expect(
                run.stdout == "parent: root-only\nchild: root-only, own connection\nparent again: root-only",
                "\(run)")
        }
    }
}
