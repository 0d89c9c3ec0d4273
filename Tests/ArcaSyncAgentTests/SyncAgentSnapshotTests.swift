import Foundation
import Testing

@testable import ArcaSyncAgent

/// An arcad twin that publishes a snapshot (issue 17's horizon).
final class SnapshotTwin: AgentArcad {
    var snapshot: [UInt8]?
    var received: [AgentFile] = []

    func deviceID() throws(SyncAgentError) -> [UInt8]? { [UInt8](repeating: 0xab, count: 32) }
    func pull(after: UInt64) throws(SyncAgentError) -> AgentOutbox {
        AgentOutbox(records: [], head: nil, approvals: [], more: false, snapshot: snapshot)
    }
    func push(_ files: [AgentFile]) throws(SyncAgentError) -> [AgentOutcome] {
        received += files
        return files.map { _ in .applied }
    }
    func appliedSeqs() throws(SyncAgentError) -> [String: UInt64] { [:] }
    func waitingFiles() throws(SyncAgentError) -> (waiting: UInt32, expired: UInt32)? { nil }
    func wait(after: UInt64, timeoutMilliseconds: UInt32) throws(SyncAgentError) -> (next: UInt64, changed: Bool) {
        (after, false)
    }
}

/// The agent carries snapshots like heads: its own into `<device>/snapshot` (rewritten only
/// when it changes), a peer's to arcad once per content.
@Suite struct SyncAgentSnapshotTests {
    @Test func ownSnapshotIsWrittenAndPeersSnapshotsArePushedOncePerContent() throws {
        let me = String(repeating: "ab", count: 32)
        let peer = String(repeating: "cd", count: 32)
        let root = SyncFolderTests().temporaryRoot()
        defer { try? FileManager.default.removeItem(atPath: String(root.dropLast(5))) }
        let folder = SyncFolder(root: root)
        let twin = SnapshotTwin()
        let agent = try SyncAgent(device: me, arcad: twin, folder: folder, scanner: nil, log: { _ in })
        #expect(try agent.pass() == (0, 0))
        #expect(folder.read(me, "snapshot") == nil)
        twin.snapshot = [0x41, 0x52, 0x50, 0x31, 1]
        #expect(try agent.pass() == (1, 0))
        #expect(folder.read(me, "snapshot") == [0x41, 0x52, 0x50, 0x31, 1])
        #expect(try agent.pass() == (0, 0))
        try folder.write([9, 9], device: peer, "snapshot")
        #expect(try agent.pass() == (0, 1))
        #expect(twin.received == [AgentFile(kind: .snapshot, author: peer, bytes: [9, 9])])
        #expect(try agent.pass() == (0, 0))
        try folder.write([9, 8], device: peer, "snapshot")
        #expect(try agent.pass() == (0, 1))
        #expect(twin.received.last == AgentFile(kind: .snapshot, author: peer, bytes: [9, 8]))
    }
}
