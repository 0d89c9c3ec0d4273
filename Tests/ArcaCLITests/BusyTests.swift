import ArcaProtocol
import Foundation
import Glibc
import Testing

/// A stand-in for an arcad that is running but does not serve: it accepts one
/// connection, reads the request, then answers `reply` (or, when nil, closes
/// without answering, as arcad does to a uid over its connection limit).
final class RefusingArcad {
    let path: String
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)

    init(reply: Reply?) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("arca-busy-\(UUID().uuidString).sock").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw TestFailure("cannot listen on \(path)") }
        let fd = listener
        DispatchQueue.global().async { [done] in
            defer { done.signal() }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                if case .complete(let decoded) = Frame.decode(buffer, as: Request.self) {
                    if let reply, let frame = try? Frame.encode(reply, requestID: decoded.requestID) {
                        _ = frame.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                    }
                    return
                }
                let n = read(client, &chunk, chunk.count)
                if n <= 0 { return }
                buffer += chunk[0..<n]
            }
        }
    }

    func stop() {
        done.wait()
        close(listener)
        unlink(path)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `arca` against an arcad that is there but refuses: never "not running" (69).
@Suite struct BusyTests {
    @Test("arcad busy deriving keys: exit 75 with arcad's reason, not 69 'arcad is not running'")
    func busyReply() throws {
        let arcad = try RefusingArcad(
            reply: .error(status: .notAvailable, message: "arcad is busy deriving keys for this user; try again"))
        defer { arcad.stop() }
        let result = try arca(["unlock", "--socket", arcad.path], stdin: "pw\n")
        #expect(
            result
                == Run(
                    status: 75, stdout: "",
                    stderr: "arca: unlock: arcad is busy deriving keys for this user; try again\n"))
    }

    @Test("arcad accepts, then closes without an answer (over its connection limit): exit 75")
    func droppedConnection() throws {
        let arcad = try RefusingArcad(reply: nil)
        defer { arcad.stop() }
        let result = try arca(["status", "--socket", arcad.path])
        #expect(result == Run(status: 75, stdout: "", stderr: "arca: status: arcad closed the connection\n"))
    }
}
