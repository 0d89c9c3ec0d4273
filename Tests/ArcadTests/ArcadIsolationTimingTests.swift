import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

/// One user cannot stall another's keyring work (issue 13, point 4): mallory
/// SIGSTOPs every process she may signal, in a loop (arcad's uid-switch helper
/// for her runs with her real uid, so each of her unlocks stalls until arcad
/// kills the helper), while alice's lock, unlock and add are timed. Holds a
/// stopwatch, so the suite's name ends in TimingTests and runs alone.
@Suite("arcad binary: one user's stopped helper never stalls another user (root, real kernel)", .serialized)
struct ArcadIsolationTimingTests {
    @Test("attack: while mallory stops her helpers in a loop, alice's lock, unlock and add take < 50 ms")
    func stoppedHelperStallsNobodyElse() throws {
        try withThrowawayUsers(2, prefix: "keyringt", cleanup: { _ = KeyringLayout().purge(user: $0.uid) }) { users in
            let (mallory, alice) = (users[0], users[1])
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            let malloryKey = try derive("pw-mallory")
            let aliceKey = try derive("pw-alice")
            #expect(try arcad.send(.enroll(uid: mallory.uid, key: malloryKey, parameters: e2eParameters)) == .ok)
            #expect(try arcad.send(.enroll(uid: alice.uid, key: aliceKey, parameters: e2eParameters)) == .ok)

            let stopper = try mallory.startStoppingEverything()
            defer { mallory.stopSignalling(stopper) }
            // Mallory keeps arcad busy with her own helpers: each unlock links a new ring
            // into her @u through a helper that the stopper freezes.
            let done = Atomic(false)
            let malloryRounds = Atomic(0)
            let flood = Thread {
                while !done.load(ordering: .relaxed) {
                    _ = try? arcad.send(.lock(uid: mallory.uid, classes: .whenUnlocked))
                    _ = try? arcad.send(.unlock(uid: mallory.uid, key: malloryKey))
                    malloryRounds.add(1, ordering: .relaxed)
                }
            }
            flood.start()
            usleep(300_000)

            var times: [String: [Double]] = ["lock": [], "unlock": [], "add": []]
            func timed(_ name: String, _ request: Request, expect reply: Reply) throws {
                let start = Clock.monotonicSeconds()
                let got = try arcad.send(request)
                times[name, default: []].append(Clock.monotonicSeconds() - start)
                #expect(got == reply, "\(name)")
            }
            let end = Clock.monotonicSeconds() + 3
            var rounds = 0
            while Clock.monotonicSeconds() < end {
                try timed("lock", .lock(uid: alice.uid, classes: .whenUnlocked), expect: .ok)
                try timed("unlock", .unlock(uid: alice.uid, key: aliceKey), expect: .ok)
                try timed("add", add(alice.uid, "mail", "a\(rounds)", "s"), expect: .items([]))
                // Keep alice's vault at one item, so that her unlock costs the same each round.
                let added = Query(
                    itemClass: .genericPassword,
                    attributes: [.service: .string("mail"), .account: .string("a\(rounds)")])
                if rounds > 0 { #expect(try arcad.send(.delete(vault: .user(uid: alice.uid), query: added)) == .ok) }
                rounds += 1
            }
            done.store(true, ordering: .relaxed)
            mallory.stopSignalling(stopper)
            // Wait for mallory's last (stalled) request so arcad.stop() finds it idle.
            while !flood.isFinished { usleep(10_000) }

            #expect(rounds >= 10)
            #expect(malloryRounds.load(ordering: .relaxed) >= 1)
            // A stall behind mallory's stopped helper costs up to its 1 s kill bound, and
            // with a lock shared across users nearly every request of alice's would wait
            // (as on the code before issue 13). 9 in 10 of alice's requests must take
            // under 50 ms and none a quarter of that bound: the rest is this shared
            // 2-core machine's scheduling, which a run with no attacker shows as well.
            for (name, seconds) in times.sorted(by: { $0.key < $1.key }) {
                let sorted = seconds.sorted()
                let slowest = sorted.suffix(5).map { String(Int($0 * 1000)) }.joined(separator: ", ")
                let summary =
                    "alice's \(name): slowest of \(sorted.count) \(slowest) ms, "
                    + "median \(Int(sorted[sorted.count / 2] * 1000)) ms"
                #expect(sorted[sorted.count * 9 / 10] < 0.050, "\(summary)")
                #expect((sorted.last ?? 0) < 0.250, "\(summary)")
            }
            // Alice's items did reach the kernel meanwhile.
            #expect(try alice.kernelRead("arca:genp:mail:a0") == "ok " + hex("s"))
        }
    }
}
