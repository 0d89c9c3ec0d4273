import Foundation
import Testing

@testable import ArcaSyncAgent

/// The agent's logic over an in-memory arcad twin and a real directory.
final class ArcadTwin: AgentArcad {
    var outbox: [(seq: UInt64, bytes: [UInt8])] = []
    var head: [UInt8]?
    var approvals: [(device: String, bytes: [UInt8])] = []
    var pageSize = 2
    var received: [AgentFile] = []
    var verdict: (AgentFile) -> AgentOutcome = { _ in .applied }
    var applied: [String: UInt64] = [:]

    func deviceID() throws(SyncAgentError) -> [UInt8]? { [UInt8](repeating: 0xab, count: 32) }
    func pull(after: UInt64) throws(SyncAgentError) -> AgentOutbox {
        let after = outbox.filter { $0.seq > after }
        return AgentOutbox(
            records: Array(after.prefix(pageSize)), head: head, approvals: approvals, more: after.count > pageSize)
    }
    func push(_ files: [AgentFile]) throws(SyncAgentError) -> [AgentOutcome] {
        received += files
        return files.map(verdict)
    }
    func appliedSeqs() throws(SyncAgentError) -> [String: UInt64] { applied }
    /// What `waitingFiles` answers, and how often it was asked.
    var waiting: (waiting: UInt32, expired: UInt32)?
    var waitingAsked = 0
    var waitingError: SyncAgentError?
    func waitingFiles() throws(SyncAgentError) -> (waiting: UInt32, expired: UInt32)? {
        waitingAsked += 1
        if let waitingError { throw waitingError }
        return waiting
    }
    func wait(after: UInt64, timeoutMilliseconds: UInt32) throws(SyncAgentError) -> (next: UInt64, changed: Bool) {
        (after, false)
    }
}

@Suite final class SyncAgentTests {
    static let me = String(repeating: "ab", count: 32)
    static let peer = String(repeating: "cd", count: 32)
    static let other = String(repeating: "ef", count: 32)

    /// Every folder made here, removed when the suite's instance goes.
    let roots = Box()

    init() {}

    func root() -> String {
        let root = SyncFolderTests().temporaryRoot()
        roots.values.append(String(root.dropLast(5)))
        return root
    }

    func make(_ twin: ArcadTwin, scans: Box? = nil) throws -> (SyncAgent, SyncFolder) {
        let folder = SyncFolder(root: root())
        let agent = try SyncAgent(
            device: Self.me, arcad: twin, folder: folder,
            scanner: { (sub: String) throws(SyncAgentError) in scans?.values.append(sub) }, log: { _ in })
        return (agent, folder)
    }

    final class Box { var values: [String] = [] }

    deinit { for path in roots.values { try? FileManager.default.removeItem(atPath: path) } }

    @Test func ownRecordsHeadAndApprovalsAreWrittenPagedThenScannedOnce() throws {
        let twin = ArcadTwin()
        twin.outbox = (1...5).map { (UInt64($0), [UInt8($0)]) }
        twin.head = [0x4e]
        twin.approvals = [(Self.peer, [7]), ("../../etc", [6])]
        let scans = Box()
        let (agent, folder) = try make(twin, scans: scans)
        #expect(try agent.pass() == (7, 0))
        #expect(folder.recordSeqs(Self.me) == [1, 2, 3, 4, 5])
        #expect(folder.read(Self.me, "records", SyncFolder.recordName(4)) == [4])
        #expect(folder.read(Self.me, "head") == [0x4e])
        #expect(folder.approvals(Self.me) == [Self.peer])
        #expect(scans.values == [Self.me])
        // Nothing new: nothing rewritten, no scan.
        #expect(try agent.pass() == (0, 0))
        #expect(scans.values == [Self.me])
    }

    @Test func restartResumesAfterTheHighestRecordOnDisk() throws {
        let twin = ArcadTwin()
        twin.outbox = [(1, [1]), (2, [2])]
        let (agent, folder) = try make(twin)
        try agent.pass()
        twin.outbox.append((3, [3]))
        let again = try SyncAgent(device: Self.me, arcad: twin, folder: folder, scanner: nil, log: { _ in })
        #expect(again.written == 2)
        #expect(try again.pass() == (1, 0))
    }

    @Test func peersRecordsGoInAnUnbrokenRunThenTheHead() throws {
        let twin = ArcadTwin()
        twin.applied = [Self.peer: 1]
        let (agent, folder) = try make(twin)
        for seq: UInt64 in [1, 2, 3, 5] { try folder.writeRecord([UInt8(seq)], device: Self.peer, seq: seq) }
        try folder.write([0x48], device: Self.peer, "head")
        try folder.write([0xaa], device: Self.peer, "approvals", Self.me)
        try folder.write([0xbb], device: Self.peer, "approvals", Self.other)
        #expect(try agent.pass() == (0, 4))
        #expect(
            twin.received == [
                AgentFile(kind: .approval(device: Self.me), author: Self.peer, bytes: [0xaa]),
                AgentFile(kind: .record(seq: 2), author: Self.peer, bytes: [2]),
                AgentFile(kind: .record(seq: 3), author: Self.peer, bytes: [3]),
                AgentFile(kind: .head, author: Self.peer, bytes: [0x48]),
            ])
        // Record 4 arrives: 4 and 5 follow; the unchanged head and approval are not sent again.
        twin.received = []
        try folder.writeRecord([4], device: Self.peer, seq: 4)
        #expect(try agent.pass() == (0, 2))
        #expect(twin.received.map(\.kind) == [.record(seq: 4), .record(seq: 5)])
    }

    @Test func refusedFilesAreReportedOnceAndOfferedAgainOnlyWhenChanged() throws {
        let twin = ArcadTwin()
        var lines: [String] = []
        let folder = SyncFolder(root: root())
        let agent = try SyncAgent(device: Self.me, arcad: twin, folder: folder, scanner: nil, log: { lines.append($0) })
        try folder.writeRecord([0xff], device: Self.peer, seq: 1)
        try folder.writeRecord([2], device: Self.peer, seq: 2)
        try folder.writeRecord([1], device: Self.other, seq: 1)
        twin.verdict = { file in
            if file.bytes == [0xff] { return .refused("bad signature") }
            return file.author == Self.other ? .notYet("locked") : .applied
        }
        #expect(try agent.pass() == (0, 1))
        #expect(lines == ["refused \(Self.peer)/records/00000000000000000001.rec: bad signature"])
        // Refused: not offered again, nor anything after it; not yet: offered again.
        twin.received = []
        #expect(try agent.pass() == (0, 0))
        #expect(twin.received.map(\.author) == [Self.other])
        #expect(lines.count == 1)
        // The author's file is replaced by a good one: it and its successor go through.
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        twin.received = []
        #expect(try agent.pass() == (0, 2))
        #expect(twin.received.filter { $0.author == Self.peer }.map(\.kind) == [.record(seq: 1), .record(seq: 2)])
    }

    @Test func ownDirectoryIsNeverPushed() throws {
        let twin = ArcadTwin()
        let (agent, folder) = try make(twin)
        try folder.writeRecord([1], device: Self.me, seq: 1)
        try folder.write([1], device: Self.me, "head")
        try agent.pass()
        #expect(twin.received.isEmpty)
    }
}
