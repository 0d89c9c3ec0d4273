import ArcaClient
import ArcaProtocol
import Foundation
import Glibc
import Testing

@testable import ArcaPAM

/// A stand-in arcad on a real Unix socket that answers every request `.ok` (a
/// `kdfParameters` with "no vault") and counts connections, requests, and requests that
/// arrived together with an earlier one still unanswered; with `closeAfter`, it closes each
/// connection after that many replies (as arcad does to an idle peer); with
/// `readsThenCloses`, it then reads one more whole request and closes without a reply (as
/// an arcad that died mid-request); with `lateSecondReply`, it waits that many
/// microseconds before each connection's second reply (past the client's timeout), then
/// sends it.
// @unchecked: the counts are touched only while `lock` is held; the rest is immutable.
final class CountingArcad: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var connectionCount = 0
    private var requestCount = 0
    private var batchedCount = 0
    private let closeAfter: Int?
    /// Signalled when the accept loop has returned: `stop` waits for it before closing the
    /// listener, or a loop still on its way into accept(2) would take the connections of
    /// the next test's listener, which reuses the descriptor number (seen under load: a
    /// test counted 0 connections while its requests were answered).
    private let acceptLoopEnded = DispatchSemaphore(value: 0)
    private let readsThenCloses: Bool
    private let lateSecondReply: useconds_t?

    init(closeAfter: Int? = nil, readsThenCloses: Bool = false, lateSecondReply: useconds_t? = nil) throws {
        self.closeAfter = closeAfter
        self.readsThenCloses = readsThenCloses
        self.lateSecondReply = lateSecondReply
        path = FileManager.default.temporaryDirectory.appendingPathComponent("arca-pam-\(UUID().uuidString).sock").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw CountingArcadError.cannotListen(path) }
        Thread { [self] in
            acceptLoop()
            acceptLoopEnded.signal()
        }.start()
    }

    var counts: (connections: Int, requests: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (connectionCount, requestCount)
    }

    /// Requests that were already whole in the buffer when the one before them was
    /// answered: sent before the client had that reply.
    var batched: Int {
        lock.lock()
        defer { lock.unlock() }
        return batchedCount
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))  // accept(2) fails from now on, also if called later
        acceptLoopEnded.wait()
        close(listener)
        unlink(path)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            lock.lock()
            connectionCount += 1
            lock.unlock()
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var replies = 0
        while closeAfter.map({ replies < $0 || (readsThenCloses && replies == $0) }) ?? true {
            if case .complete(let decoded) = Frame.decode(buffer, as: Request.self) {
                buffer.removeFirst(decoded.length)
                let next = if case .complete = Frame.decode(buffer, as: Request.self) { 1 } else { 0 }
                lock.lock()
                requestCount += 1
                batchedCount += next
                lock.unlock()
                if readsThenCloses, closeAfter == replies { return }
                let reply: Reply = if case .kdfParameters = decoded.message { .kdfParameters(nil) } else { .ok }
                guard let frame = try? Frame.encode(reply, requestID: decoded.requestID) else { return }
                if let lateSecondReply, replies == 1 { usleep(lateSecondReply) }
                // MSG_NOSIGNAL: the client may have closed by now (a late reply); no SIGPIPE.
                _ = frame.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                replies += 1
                continue
            }
            let n = read(client, &chunk, chunk.count)
            if n <= 0 { return }
            buffer += chunk[0..<n]
        }
    }
}

enum CountingArcadError: Error { case cannotListen(String) }

/// pam_arca's live transport over a real socket: the requests of one PAM call share a
/// connection (a login's open_session: the unlock, then the session), never across a
/// KDF run.
@Suite struct SocketTransportTests {
    let request = Request.closeSession(uid: 1000, token: [UInt8](repeating: 7, count: 32))

    @Test("two requests of one PAM call: one connection, two replies")
    func requestsShareOneConnection() throws {
        let arcad = try CountingArcad()
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        #expect(try transport.send(request) == .ok)
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 1)
        #expect(arcad.counts.requests == 2)
        // One after the other: the second was written after the first's reply.
        #expect(arcad.batched == 0)
    }

    @Test("a pair (a login's unlock and session): one write, one connection, each reply to its own request")
    func pairIsSentInOneRoundTrip() throws {
        let arcad = try CountingArcad()
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        let replies = try transport.send(.kdfParameters(uid: 1000), then: request)
        #expect(replies == ReplyPair(first: .kdfParameters(nil), second: .replied(.ok)))
        #expect(arcad.counts.connections == 1)
        #expect(arcad.counts.requests == 2)
        // The second request was in arcad's buffer before the first was answered.
        #expect(arcad.batched == 1)
        // The connection is kept for the next request of the same PAM call.
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 1)
        #expect(arcad.batched == 1)
    }

    @Test("a pair whose second reply never comes: the first reply is returned with the error, the connection dropped")
    func pairKeepsTheFirstReplyWhenTheSecondFails() throws {
        let arcad = try CountingArcad(closeAfter: 1)
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        let replies = try transport.send(.kdfParameters(uid: 1000), then: request)
        #expect(replies == ReplyPair(first: .kdfParameters(nil), second: .failed(.connectionClosed)))
        #expect(arcad.counts.connections == 1)
        #expect(arcad.counts.requests == 1)
        // Answered on a new connection; arcad closed the first, so this holds whether or not
        // the transport kept it (that it does not: pairDropsTheConnectionWhenTheSecondReplyIsLate).
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 2)
    }

    @Test("a pair whose second reply comes late: timed out, and its connection not kept (the late reply is stale)")
    func pairDropsTheConnectionWhenTheSecondReplyIsLate() throws {
        let arcad = try CountingArcad(lateSecondReply: 600_000)
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 200)
        let replies = try transport.send(.kdfParameters(uid: 1000), then: request)
        #expect(replies == ReplyPair(first: .kdfParameters(nil), second: .failed(.timedOut)))
        #expect(arcad.counts.connections == 1)
        #expect(arcad.counts.requests == 2)
        usleep(600_000)  // the late reply is on the first connection by now, still open on a kept one
        // Not kept: the next request goes on a new connection, and gets its own reply. (A kept
        // connection would read the late reply first: malformedReply, "request id".)
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 2)
        #expect(arcad.counts.requests == 3)
    }

    @Test("disconnect (before a KDF run): the next request connects anew")
    func disconnectClosesTheConnection() throws {
        let arcad = try CountingArcad()
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        #expect(try transport.send(request) == .ok)
        transport.disconnect()
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 2)
        #expect(arcad.counts.requests == 2)
    }

    @Test("a kept connection arcad has closed: the request is sent once more on a new one and answered")
    func closedConnectionIsReplaced() throws {
        let arcad = try CountingArcad(closeAfter: 1)
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        #expect(try transport.send(request) == .ok)
        usleep(50_000)  // arcad's side is closed by now
        #expect(try transport.send(request) == .ok)
        #expect(arcad.counts.connections == 2)
        #expect(arcad.counts.requests == 2)
    }

    @Test("a kept connection closed after arcad read the request: not sent again (it may have run)")
    func readRequestIsNotSentTwice() throws {
        let arcad = try CountingArcad(closeAfter: 1, readsThenCloses: true)
        defer { arcad.stop() }
        let transport = SocketTransport(path: arcad.path, timeoutMilliseconds: 2_000)
        #expect(try transport.send(request) == .ok)
        #expect(throws: ClientError.connectionClosed) { try transport.send(request) }
        // Before requestUnread, the transport sent it again on a new connection: 3 requests.
        #expect(arcad.counts.connections == 1)
        #expect(arcad.counts.requests == 2)
    }

    @Test("ArcadClient.requestUnread: true when arcad had closed, false when it read the request")
    func requestUnreadTellsTheTwoApart() throws {
        let idle = try CountingArcad(closeAfter: 1)
        defer { idle.stop() }
        let first = try ArcadClient(path: idle.path, timeoutMilliseconds: 2_000)
        #expect(try first.send(request) == .ok)
        #expect(!first.requestUnread)
        usleep(50_000)  // closed by now
        #expect(throws: ClientError.connectionClosed) { try first.send(request) }
        #expect(first.requestUnread)
        #expect(idle.counts.requests == 1)

        let dying = try CountingArcad(closeAfter: 1, readsThenCloses: true)
        defer { dying.stop() }
        let second = try ArcadClient(path: dying.path, timeoutMilliseconds: 2_000)
        #expect(try second.send(request) == .ok)
        #expect(throws: ClientError.connectionClosed) { try second.send(request) }
        #expect(!second.requestUnread)
        #expect(dying.counts.requests == 2)
    }
}
