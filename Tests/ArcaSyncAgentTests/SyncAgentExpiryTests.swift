import Foundation
import Testing

@testable import ArcaSyncAgent

/// Files arcad queued and later dropped as expired (issue 17's edge case): the agent offers
/// them again on its own, at its next pass, instead of waiting for its next start.
@Suite final class SyncAgentExpiryTests {
    static let me = String(repeating: "ab", count: 32)
    static let peer = String(repeating: "cd", count: 32)
    let base = SyncAgentTests()

    func make(_ twin: ArcadTwin, lines: SyncAgentTests.Box = .init()) throws -> (SyncAgent, SyncFolder) {
        let folder = SyncFolder(root: base.root())
        let agent = try SyncAgent(
            device: Self.me, arcad: twin, folder: folder, scanner: nil, log: { lines.values.append($0) })
        return (agent, folder)
    }

    @Test func expiredFilesAreOfferedAgainAtTheNextPass() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 3)  // three expired before this agent started: not this agent's
        let lines = SyncAgentTests.Box()
        let (agent, folder) = try make(twin, lines: lines)
        for seq: UInt64 in [1, 2] { try folder.writeRecord([UInt8(seq)], device: Self.peer, seq: seq) }
        try folder.write([0x48], device: Self.peer, "head")
        twin.verdict = { _ in .queued }
        twin.waiting = (3, 3)
        #expect(try agent.pass() == (0, 3))
        #expect(agent.awaitingQueued)
        // Still waiting in arcad: not offered again.
        twin.received = []
        #expect(try agent.pass() == (0, 0))
        #expect(twin.received.isEmpty)
        // arcad drops them (24 hours later); it applied none of them.
        twin.waiting = (0, 6)
        twin.verdict = { _ in .applied }
        #expect(try agent.pass() == (0, 3))
        #expect(
            twin.received == [
                AgentFile(kind: .record(seq: 1), author: Self.peer, bytes: [1]),
                AgentFile(kind: .record(seq: 2), author: Self.peer, bytes: [2]),
                AgentFile(kind: .head, author: Self.peer, bytes: [0x48]),
            ])
        #expect(lines.values == ["arcad dropped 3 waiting files as expired: offering the folder again"])
        #expect(!agent.awaitingQueued)
        // Applied now: nothing more, and arcad is no longer asked.
        twin.received = []
        let asked = twin.waitingAsked
        #expect(try agent.pass() == (0, 0))
        #expect(twin.received.isEmpty)
        #expect(twin.waitingAsked == asked)
    }

    @Test func onlyWhatArcadHasNotAppliedIsOfferedAgain() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 0)
        let (agent, folder) = try make(twin)
        for seq: UInt64 in [1, 2, 3] { try folder.writeRecord([UInt8(seq)], device: Self.peer, seq: seq) }
        twin.verdict = { file in file.kind == .record(seq: 1) ? .applied : .queued }
        twin.waiting = (2, 0)
        #expect(try agent.pass() == (0, 3))
        twin.applied = [Self.peer: 1]
        twin.waiting = (0, 2)
        twin.received = []
        twin.verdict = { _ in .applied }
        #expect(try agent.pass() == (0, 2))
        #expect(twin.received.map(\.kind) == [.record(seq: 2), .record(seq: 3)])
    }

    @Test func anAgentNeverAsksWhileNothingIsQueued() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 0)
        let (agent, folder) = try make(twin)
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        #expect(twin.waitingAsked == 1)  // at start
        #expect(try agent.pass() == (0, 1))
        #expect(try agent.pass() == (0, 0))
        #expect(twin.waitingAsked == 1)
        #expect(!agent.awaitingQueued)
    }

    @Test func anArcadThatDoesNotSayIsNeverAsked() throws {
        let twin = ArcadTwin()  // waiting nil: an arcad from before the counts
        let (agent, folder) = try make(twin)
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        twin.verdict = { _ in .queued }
        #expect(try agent.pass() == (0, 1))
        #expect(!agent.awaitingQueued)
        twin.received = []
        #expect(try agent.pass() == (0, 0))
        #expect(twin.received.isEmpty)
        #expect(twin.waitingAsked == 1)  // at start only
    }

    @Test func anArcadThatStopsSayingIsNoLongerAsked() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 0)
        let (agent, folder) = try make(twin)
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        twin.verdict = { _ in .queued }
        twin.waiting = nil  // arcad was replaced by an older one
        #expect(try agent.pass() == (0, 1))
        #expect(!agent.awaitingQueued)
        #expect(twin.waitingAsked == 2)
        #expect(try agent.pass() == (0, 0))
        #expect(twin.waitingAsked == 2)
    }

    @Test func aFailedQuestionDoesNotAbortThePass() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 0)
        let lines = SyncAgentTests.Box()
        let (agent, folder) = try make(twin, lines: lines)
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        twin.verdict = { _ in .queued }
        twin.waitingError = .arcad("arcad went away")
        #expect(try agent.pass() == (0, 1))
        #expect(agent.awaitingQueued)
        #expect(
            lines.values == [
                "cannot ask arcad which waiting files expired (asked again at the next pass): "
                    + SyncAgentError.arcad("arcad went away").description
            ])
        // Asked again at the next pass, which now sees the expiry.
        twin.waitingError = nil
        twin.waiting = (0, 1)
        twin.verdict = { _ in .applied }
        twin.received = []
        #expect(try agent.pass() == (0, 1))
        #expect(twin.received.map(\.kind) == [.record(seq: 1)])
    }

    @Test func aCountThatDropsIsAResetNotAnExpiry() throws {
        let twin = ArcadTwin()
        twin.waiting = (0, 5)
        let lines = SyncAgentTests.Box()
        let (agent, folder) = try make(twin, lines: lines)
        try folder.writeRecord([1], device: Self.peer, seq: 1)
        twin.verdict = { _ in .queued }
        twin.waiting = (1, 5)
        #expect(try agent.pass() == (0, 1))
        // A sync reset removed arcad's queue: its count starts again from 0.
        twin.waiting = (0, 0)
        twin.received = []
        #expect(try agent.pass() == (0, 0))
        #expect(twin.received.isEmpty)
        #expect(lines.values.isEmpty)
        #expect(!agent.awaitingQueued)
        // Counted from the reset on: a later expiry is seen with its true number.
        twin.verdict = { _ in .queued }
        try folder.writeRecord([2], device: Self.peer, seq: 2)
        twin.waiting = (1, 0)
        #expect(try agent.pass() == (0, 1))
        twin.waiting = (0, 1)
        twin.verdict = { _ in .applied }
        #expect(try agent.pass() == (0, 2))
        #expect(lines.values == ["arcad dropped 1 waiting files as expired: offering the folder again"])
    }
}
