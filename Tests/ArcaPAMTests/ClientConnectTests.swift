import ArcaClient
import ArcaSystem
import Glibc
import Testing

/// `ArcadClient.init`'s one connect (pam_arca's, the CLI's, the library's): every way it
/// ends maps to one `ClientError`. A connect past its timeout arrives from ArcaSystem as
/// `wouldBlock` whatever the socket kind (SocketConnect turns TCP's EINPROGRESS into it).
@Suite struct ClientConnectTests {
    static func path() -> String { "/tmp/arca-client-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock" }

    @Test("no socket file: notRunning(ENOENT)")
    func noSocket() {
        let path = Self.path()
        #expect(throws: ClientError.notRunning(path: path, errno: .noSuchFileOrDirectory)) {
            _ = try ArcadClient(path: path, timeoutMilliseconds: 100)
        }
    }

    @Test("a socket file nobody listens on: notRunning(ECONNREFUSED)")
    func nobodyListens() throws {
        let path = Self.path()
        let listener = try UnixSocket.listen(path: path, mode: 0o600)
        listener.close()
        defer { unlink(path) }
        #expect(throws: ClientError.notRunning(path: path, errno: .connectionRefused)) {
            _ = try ArcadClient(path: path, timeoutMilliseconds: 100)
        }
    }

    @Test("a path too long for sun_path: notRunning(ENAMETOOLONG)")
    func pathTooLong() {
        let path = "/tmp/" + String(repeating: "x", count: 120)
        #expect(throws: ClientError.notRunning(path: path, errno: .nameTooLong)) {
            _ = try ArcadClient(path: path, timeoutMilliseconds: 100)
        }
    }

    @Test("a listener whose queue is full: timedOut after the connects it queued")
    func fullQueue() throws {
        let path = Self.path()
        let listener = try UnixSocket.listen(path: path, mode: 0o600, backlog: 0)
        defer {
            listener.close()
            unlink(path)
        }
        var connected: [ArcadClient] = []
        var outcome: ClientError?
        for _ in 0..<16 {
            do { connected.append(try ArcadClient(path: path, timeoutMilliseconds: 100)) } catch {
                outcome = error
                break
            }
        }
        #expect(outcome == .timedOut)
        #expect(!connected.isEmpty, "the first connect is queued, not refused")
        #expect(connected.allSatisfy { $0.path == path })
    }
}
