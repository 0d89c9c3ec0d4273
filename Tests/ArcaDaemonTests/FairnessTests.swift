import ArcaProtocol
import Foundation
import Synchronization
import Testing

@testable import ArcaDaemon

/// The schedule behind a reference, so that `#expect` may call its mutating methods.
final class ScheduleBox {
    var schedule: DerivationSchedule
    init(slots: Int, waitingPerUID: Int) { schedule = DerivationSchedule(slots: slots, waitingPerUID: waitingPerUID) }
    func enqueue(uid: UInt32) -> DerivationSchedule.Ticket? { schedule.enqueue(uid: uid) }
    func take(_ ticket: DerivationSchedule.Ticket) -> Bool { schedule.take(ticket) }
    func finish(_ ticket: DerivationSchedule.Ticket) { schedule.finish(ticket) }
    var waitingCount: Int { schedule.waitingCount }
}

@Suite("Argon2id derivation queue: one per uid, round-robin across uids")
struct DerivationScheduleTests {
    @Test("a flooding uid holds one slot; another uid gets the other at once")
    func floodKeepsOneSlot() throws {
        let s = ScheduleBox(slots: 2, waitingPerUID: 4)
        var a: [DerivationSchedule.Ticket] = []
        for _ in 0..<4 { a.append(try #require(s.enqueue(uid: 1000))) }
        let firstRuns = s.take(a[0])
        let secondRuns = s.take(a[1])  // the same uid waits for its own derivation
        let b = try #require(s.enqueue(uid: 2000))
        let bRuns = s.take(b)  // not refused, not queued behind the flood
        #expect(firstRuns && !secondRuns && bRuns)
        #expect(s.waitingCount == 3)
    }

    @Test("turns go round the uids in arrival order, not request order")
    func roundRobin() throws {
        let s = ScheduleBox(slots: 1, waitingPerUID: 8)
        let a1 = try #require(s.enqueue(uid: 1))
        let a2 = try #require(s.enqueue(uid: 1))
        let a3 = try #require(s.enqueue(uid: 1))
        let b1 = try #require(s.enqueue(uid: 2))
        let c1 = try #require(s.enqueue(uid: 3))
        var order: [DerivationSchedule.Ticket] = []
        let all = [a1, a2, a3, b1, c1]
        for _ in all {
            for ticket in all where !order.contains(ticket) && s.take(ticket) {
                order.append(ticket)
                s.finish(ticket)
                break
            }
        }
        // uid 1 queued three first, yet 2 and 3 each wait for one derivation of uid 1 only.
        #expect(order == [a1, b1, c1, a2, a3])
    }

    @Test("a uid with too many waiting is refused; others are not; finishing frees the place")
    func waitingLimit() throws {
        let s = ScheduleBox(slots: 2, waitingPerUID: 2)
        let running = try #require(s.enqueue(uid: 7))
        let runs = s.take(running)
        #expect(runs)
        #expect(s.enqueue(uid: 7) != nil)
        #expect(s.enqueue(uid: 7) != nil)
        #expect(s.enqueue(uid: 7) == nil)
        #expect(s.enqueue(uid: 8) != nil)
        s.finish(running)
        #expect(s.enqueue(uid: 7) != nil)
        // Finishing an unknown or finished ticket changes nothing.
        s.finish(running)
        s.finish(999)
        #expect(s.waitingCount == 2)
    }

    @Test("threads: a uid's second request waits for its first; another uid's runs meanwhile")
    func threads() throws {
        let queue = DerivationQueue(slots: 2, waitingPerUID: 4)
        let events = Mutex<[String]>([])
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            _ = try? queue.run(uid: 1) { () throws(HandlerError) -> Int in
                events.withLock { $0.append("a1 start") }
                started.signal()
                release.wait()
                events.withLock { $0.append("a1 end") }
                return 1
            }
        }
        started.wait()
        DispatchQueue.global().async(group: group) {
            _ = try? queue.run(uid: 1) { () throws(HandlerError) -> Int in
                events.withLock { $0.append("a2") }
                return 2
            }
        }
        // uid 2 runs to the end while uid 1's first derivation still holds its slot.
        let b = try queue.run(uid: 2) { () throws(HandlerError) -> Int in
            events.withLock { $0.append("b") }
            return 3
        }
        #expect(b == 3)
        #expect(events.withLock { $0 } == ["a1 start", "b"])
        release.signal()
        group.wait()
        #expect(events.withLock { $0 } == ["a1 start", "b", "a1 end", "a2"])
    }
}

@Suite("in-process arcad: kdf_max_cost (root)", .serialized)
struct CostCapTests {
    @Test("a user may not give their vault a cost above kdf_max_cost; arcad never derives above it")
    func userCostCapped() throws {
        var config = DaemonConfig()
        config.kdfMaxCost = 128
        let t = try TestDaemon(config: config)
        defer { t.cleanUp() }
        let uid: UInt32 = 60_041
        var costly = testParameters
        costly.opsLimit = 3  // 3 passes × 64 MiB = 192 > 128
        let key = try derivedKey("pw")
        let refused = t.send(.enroll(uid: uid, key: key, parameters: costly), as: uid)
        #expect(
            refused
                == .error(
                    status: .param, message: "Argon2id cost above kdf_max_cost (passes × MiB at most 128; arca.conf(5))"
                ))
        // The login stack (root) sends what pam_arca calibrated: accepted, but
        // arcad will not run that derivation itself for `arca unlock`.
        #expect(t.send(.enroll(uid: uid, key: key, parameters: costly), as: 0) == .ok)
        _ = t.send(.lock(uid: uid, classes: .whenUnlocked), as: uid)
        let unlock = t.send(.unlockWithPassword(uid: uid, password: Array("pw".utf8)), as: uid)
        #expect(statusCode(unlock) == -50)
        // Within the cap: the user's own change of cost is accepted.
        #expect(t.send(.unlock(uid: uid, key: key), as: 0) == .ok)
        let newKey = try derivedKey("pw2")
        #expect(
            t.send(.changePassword(uid: uid, oldKey: key, newKey: newKey, parameters: testParameters), as: uid)
                == .ok)
        #expect(t.send(.unlockWithPassword(uid: uid, password: Array("pw2".utf8)), as: uid) == .ok)
    }
}

@Suite("in-process arcad: sessions bound to the process that opened them (root)", .serialized)
struct SessionReapingTests {
    /// A child process standing in for a PAM application.
    func child() throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sleep")
        p.arguments = ["60"]
        try p.run()
        return p
    }

    func open(_ t: TestDaemon, uid: UInt32, token: UInt8, pid: Int32, startTime: UInt64?) -> Reply {
        var request = Request.openSession(SessionOpening(uid: uid, token: [token], service: "login"))
        return t.daemon.handle(&request, from: PeerCredentials(pid: pid, uid: 0, gid: 0, startTime: startTime))
    }

    func sessionCount(_ t: TestDaemon, _ uid: UInt32) -> UInt32? {
        guard case .status(let s) = t.send(.status(uid: uid), as: 0) else { return nil }
        return s.sessionCount
    }

    @Test("the opener killed with SIGKILL: its session ends with the usual lock effects; a live one stays")
    func killedOpener() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let uid: UInt32 = 60_051
        #expect(t.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        _ = t.send(addRequest(uid, "mail", "a", "s3cret"), as: uid)
        let first = try child()
        let second = try child()
        defer { second.terminate() }
        for (token, p) in [(UInt8(1), first), (2, second)] {
            let pid = p.processIdentifier
            #expect(open(t, uid: uid, token: token, pid: pid, startTime: ProcessHandle.startTime(of: pid)) == .ok)
        }
        t.daemon.reapSessions()
        #expect(sessionCount(t, uid) == 2)
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        t.daemon.reapSessions()
        #expect(sessionCount(t, uid) == 1)
        #expect(t.kernel.ring(uid, .whenUnlocked) == ["arca:genp:mail:a": "s3cret"])
        kill(second.processIdentifier, SIGKILL)
        // Not yet reaped by its parent (a zombie): exited all the same.
        usleep(50_000)
        t.daemon.reapSessions()
        #expect(sessionCount(t, uid) == 0)
        #expect(t.kernel.ring(uid, .whenUnlocked) == nil)
        #expect(t.kernel.ring(uid, .afterFirstUnlock) == [:])
        second.waitUntilExit()
    }

    @Test("a pid reused since it connected, or gone, ends the session at once; an unknown pid (0) binds nothing")
    func reusedPid() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let uid: UInt32 = 60_052
        #expect(t.send(.enroll(uid: uid, key: try derivedKey("pw"), parameters: testParameters), as: 0) == .ok)
        let p = try child()
        defer { p.terminate() }
        let pid = p.processIdentifier
        let real = try #require(ProcessHandle.startTime(of: pid))
        #expect(open(t, uid: uid, token: 1, pid: pid, startTime: real &+ 1) == .ok)
        #expect(open(t, uid: uid, token: 2, pid: 4_000_000, startTime: nil) == .ok)  // no such process
        // pid 0: a peer in another pid namespace; nothing to bind to, so it is kept.
        #expect(open(t, uid: uid, token: 3, pid: 0, startTime: nil) == .ok)
        #expect(sessionCount(t, uid) == 3)
        t.daemon.reapSessions()
        #expect(sessionCount(t, uid) == 1)
        #expect(t.kernel.ring(uid, .whenUnlocked) != nil)
        #expect(t.send(.closeSession(uid: uid, token: [3]), as: 0) == .ok)
        #expect(t.kernel.ring(uid, .whenUnlocked) == nil)
    }

    @Test("/proc start time: this process has one, a missing pid has none")
    func startTimes() {
        #expect(ProcessHandle.startTime(of: getpid()) != nil)
        #expect(ProcessHandle.startTime(of: 4_000_000) == nil)
        #expect(ProcessHandle.open(pid: getpid(), startTime: nil).hasExited == false)
        #expect(ProcessHandle.open(pid: 0, startTime: nil).hasExited == true)
    }
}
