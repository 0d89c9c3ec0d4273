import ArcaClient
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

/// arcad as shipped: the release or debug binary, a real socket (SO_PEERCRED), the
/// real kernel keyring, throwaway users. Root only; fails loudly otherwise.
@Suite("arcad binary: end to end (root, real kernel)", .serialized)
struct ArcadEndToEndTests {
    func purge(_ user: TestUser) { _ = KeyringLayout().purge(user: user.uid) }

    @Test("lock-state transitions, checked in the kernel after each step")
    func lockStates() throws {
        try withThrowawayUsers(1, prefix: "arcae", cleanup: purge) { users in
            let alice = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            let key = try derive("correct horse")
            #expect(try arcad.send(.enroll(uid: alice.uid, key: key, parameters: e2eParameters)) == .ok)
            #expect(try arcad.send(add(alice.uid, "mail", "alice", "s3cret")) == .items([]))
            #expect(try arcad.send(add(alice.uid, "vpn", "alice", "v-pn", accessible: .afterFirstUnlock)) == .items([]))
            #expect(try alice.kernelRead("arca:genp:mail:alice") == "ok " + hex("s3cret"))
            #expect(try alice.kernelRead("arca:genp:vpn:alice") == "ok " + hex("v-pn"))

            // Two sessions; closing one keeps whenUnlocked, closing both removes it.
            #expect(try arcad.send(.openSession(SessionOpening(uid: alice.uid, token: [1], service: "login"))) == .ok)
            #expect(try arcad.send(.openSession(SessionOpening(uid: alice.uid, token: [2], service: "sshd"))) == .ok)
            #expect(try arcad.send(.closeSession(uid: alice.uid, token: [1])) == .ok)
            #expect(try alice.kernelRead("arca:genp:mail:alice") == "ok " + hex("s3cret"))
            #expect(try arcad.send(.closeSession(uid: alice.uid, token: [2])) == .ok)
            let gone = try alice.kernelRead("arca:genp:mail:alice")
            #expect(gone == "error ENOKEY" || gone == "error EKEYREVOKED", "got \(gone)")
            #expect(try alice.kernelRead("arca:genp:vpn:alice") == "ok " + hex("v-pn"))

            // The screen locker (the user itself) unlocks: whenUnlocked is back.
            #expect(try arcad.send(.unlock(uid: alice.uid, key: key)) == .ok)
            #expect(try alice.kernelRead("arca:genp:mail:alice") == "ok " + hex("s3cret"))
            #expect(try arcad.send(.lock(uid: alice.uid, classes: .whenUnlocked)) == .ok)
            #expect(try alice.kernelRead("arca:genp:mail:alice") != "ok " + hex("s3cret"))
            #expect(try alice.probe(arcad.socket, "get", "\(alice.uid)", "mail", "alice").hasPrefix("error -25308"))
            #expect(try alice.probe(arcad.socket, "unlock-password", "\(alice.uid)", stdin: "correct horse\n") == "ok")
            #expect(try alice.kernelRead("arca:genp:mail:alice") == "ok " + hex("s3cret"))

            // lock-all: everything leaves the kernel.
            #expect(try alice.probe(arcad.socket, "lock-all") == "ok")
            #expect(try alice.kernelRead("arca:genp:vpn:alice") != "ok " + hex("v-pn"))
        }
    }

    @Test("SO_PEERCRED decides: a user reaches only their own vault; refusals leak nothing")
    func peerCredentials() throws {
        try withThrowawayUsers(2, prefix: "arcae", cleanup: purge) { users in
            let (alice, bob) = (users[0], users[1])
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            #expect(try alice.probe(arcad.socket, "add", "\(alice.uid)", "web", "alice", stdin: "hunter2\n") == "ok")
            #expect(try alice.probe(arcad.socket, "get", "\(alice.uid)", "web", "alice") == "ok hunter2")
            let refusal = "error -34018 not allowed for this caller"
            #expect(try bob.probe(arcad.socket, "get", "\(alice.uid)", "web", "alice") == refusal)
            #expect(try bob.probe(arcad.socket, "add", "\(alice.uid)", "web", "bob", stdin: "x\n") == refusal)
            #expect(try bob.probe(arcad.socket, "status", "\(alice.uid)") == refusal)
            #expect(try bob.probe(arcad.socket, "status", "4000000000") == refusal)
            #expect(try bob.probe(arcad.socket, "kdf", "\(alice.uid)") == refusal)
            #expect(try bob.probe(arcad.socket, "sessions") == refusal)
            #expect(try bob.probe(arcad.socket, "reset", "\(alice.uid)") == refusal)
            #expect(try bob.probe(arcad.socket, "status") == "ok vault=false unlocked=0 sessions=0 sync=true")
            #expect(try alice.probe(arcad.socket, "status") == "ok vault=true unlocked=3 sessions=0 sync=true")
            #expect(try bob.kernelRead("arca:genp:web:alice").hasPrefix("error"))
        }
    }

    @Test("arcad survives 10,000 random and mutated frames, then answers a valid request")
    func protocolFuzz() throws {
        let arcad = try ArcadProcess()
        defer { arcad.stop() }
        var rng = SplitMix(seed: 0xA4CA_D)
        let valid = try Frame.encode(get(0, "svc", "acct"), requestID: 7)
        var sent = 0
        for round in 0..<10_000 {
            var frame: [UInt8]
            if round % 2 == 0 {
                frame = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            } else {
                frame = valid
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let i = Int(rng.next() % UInt64(frame.count))
                    frame[i] = UInt8(truncatingIfNeeded: rng.next())
                }
                if rng.next() % 4 == 0 { frame.removeLast(Int(rng.next() % UInt64(frame.count))) }
            }
            if RawSocket.sendAndClose(arcad.socket, frame) { sent += 1 }
        }
        #expect(sent == 10_000)
        // Connections of the fuzz may still be winding down; the next one is admitted.
        usleep(200_000)
        #expect(
            try arcad.send(.status(uid: nil))
                == .status(
                    VaultStatus(
                        uid: 0, hasVault: false, unlocked: [], sessionCount: 0, passwordOutOfSync: false,
                        itemsNotInKernel: 0,
                        hasRecoveryKey: false)))
        #expect(arcad.process?.isRunning == true)
    }

    @Test("SIGKILL during a burst of adds: every acknowledged item is there, the user is still unlocked")
    func killDuringAdds() throws {
        try withThrowawayUsers(1, prefix: "arcae", cleanup: purge) { users in
            let alice = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            var acknowledged: [Int] = []
            for round in 0..<5 {
                let killer = Thread {
                    usleep(UInt32.random(in: 20_000...150_000))
                    arcad.kill9()
                }
                killer.start()
                var n = round * 10_000
                while true {
                    n += 1
                    guard let reply = try? arcad.send(add(alice.uid, "burst", "a\(n)", "s\(n)")) else { break }
                    #expect(reply == .items([]))
                    acknowledged.append(n)
                }
                while arcad.process != nil { usleep(1000) }
                try arcad.start()
            }
            #expect(acknowledged.count > 0)
            for n in acknowledged {
                guard case .items(let items) = try arcad.send(get(alice.uid, "burst", "a\(n)")), items.count == 1 else {
                    Issue.record("acknowledged item a\(n) is missing")
                    continue
                }
                #expect(items[0].data == Array("s\(n)".utf8))
            }
            // Still unlocked after five kills (parked keys), and the kernel ring is intact.
            #expect(try alice.probe(arcad.socket, "status") == "ok vault=true unlocked=3 sessions=0 sync=true")
            if let last = acknowledged.last {
                #expect(try alice.kernelRead("arca:genp:burst:a\(last)") == "ok " + hex("s\(last)"))
            }
        }
    }

    @Test("50 concurrent clients adding and reading for 10 seconds: no error, no lost item")
    func concurrentClients() throws {
        try withThrowawayUsers(1, prefix: "arcae", cleanup: purge) { users in
            let alice = users[0]
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            #expect(try arcad.send(.enroll(uid: alice.uid, key: try derive("pw"), parameters: e2eParameters)) == .ok)
            let errors = Counter()
            let added = Counter()
            let deadline = Date().addingTimeInterval(10)
            let group = DispatchGroup()
            for client in 0..<50 {
                group.enter()
                Thread {
                    defer { group.leave() }
                    var n = 0
                    while Date() < deadline {
                        n += 1
                        let account = "c\(client)-\(n)"
                        do {
                            let connection = try ArcadClient(path: arcad.socket, timeoutMilliseconds: 30_000)
                            guard try connection.send(add(alice.uid, "conc", account, account)) == .items([]),
                                try connection.send(get(alice.uid, "conc", account))
                                    == .items([ResultItem(data: Array(account.utf8))])
                            else {
                                errors.increment()
                                continue
                            }
                            added.increment()
                        } catch {
                            errors.increment()
                        }
                    }
                }.start()
            }
            group.wait()
            #expect(errors.value == 0)
            #expect(added.value > 50)
            let all = Query(
                itemClass: .genericPassword, attributes: [.service: .string("conc")], matchLimit: .all,
                returnFlags: .attributes)
            guard case .items(let items) = try arcad.send(.copyMatching(vault: .user(uid: alice.uid), query: all))
            else {
                Issue.record("no items")
                return
            }
            #expect(items.count == added.value)
        }
    }
}

// @unchecked: `count` is touched only while `lock` is held.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() {
        lock.lock()
        count += 1
        lock.unlock()
    }
    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Writes raw bytes to a Unix socket and closes: what a hostile client can do.
enum RawSocket {
    static func sendAndClose(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let connection = try? RawConnection(path) else { return false }
        connection.write(bytes)
        return true
    }
}
