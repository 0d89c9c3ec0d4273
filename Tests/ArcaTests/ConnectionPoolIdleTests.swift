import ArcaClient
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

@testable import Arca

/// arcad closes a connection that sends no request within client_timeout_ms (100 ms here).
/// The pool keeps connections between calls; one that idled past that is replaced,
/// because the failure proves arcad never read the request (`ArcadClient.requestUnread`).
@Suite struct ConnectionPoolIdleTests {
    @Test("a pooled connection arcad closed for idling: replaced, the request answered")
    func idleConnectionIsReplaced_root() throws {
        let arcad = try ArcadProcess(prefix: "idlecli-pool", config: "client_timeout_ms = 100\n")
        defer { arcad.stop() }
        let pool = ConnectionPool.shared(path: arcad.socket)
        guard case .status(let before) = try pool.send(.status(uid: nil)) else {
            Issue.record("no status reply")
            return
        }
        #expect(before.uid == 0)
        usleep(400_000)
        guard case .status(let after) = try pool.send(.status(uid: nil)) else {
            Issue.record("no status reply after idling")
            return
        }
        #expect(after.uid == 0)
    }

    @Test("ArcadClient on a connection arcad closed for idling: connectionClosed, requestUnread")
    func idleClientKnowsItsRequestWasUnread_root() throws {
        let arcad = try ArcadProcess(prefix: "idlecli-client", config: "client_timeout_ms = 100\n")
        defer { arcad.stop() }
        let client = try ArcadClient(path: arcad.socket)
        guard case .status = try client.send(.status(uid: nil)) else {
            Issue.record("no status reply")
            return
        }
        #expect(!client.requestUnread)
        usleep(400_000)
        #expect(throws: ClientError.connectionClosed) { try client.send(.status(uid: nil)) }
        #expect(client.requestUnread)
    }
}
