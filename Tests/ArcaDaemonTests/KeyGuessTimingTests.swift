import ArcaCrypto
import ArcaProtocol
import Foundation
import Synchronization
import Testing

@testable import ArcaDaemon

/// Every request that checks a user's key or recovery key shares unlock's per-uid
/// failure count and delay (issue 14, point 4), and guesses of one uid wait their
/// turn, so that parallel connections buy no extra tries. Wall clock: runs alone.
@Suite("in-process arcad: key-guess delays (root, timing)", .serialized)
struct KeyGuessTimingTests {
    let alice: UInt32 = 60_051

    func seconds(_ body: () -> Void) -> Double {
        let start = Date()
        body()
        return Date().timeIntervalSince(start)
    }

    @Test("failed unlocks of a uid are delayed, growing: 0.25 s, 0.5 s, 1 s; a success resets the count")
    func unlockDelays() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        _ = try enrolled(t, alice)
        let wrong = try derivedKey("wrong")
        var delays: [Double] = []
        for _ in 0..<3 {
            delays.append(seconds { #expect(statusCode(t.send(.unlock(uid: alice, key: wrong), as: alice)) == -25293) })
        }
        #expect(delays[0] >= 0.25 && delays[0] < 0.45)
        #expect(delays[1] >= 0.5 && delays[1] < 0.7)
        #expect(delays[2] >= 1.0 && delays[2] < 1.2)
        #expect(t.send(.unlock(uid: alice, key: try derivedKey("pw")), as: alice) == .ok)
        let after = seconds { _ = t.send(.unlock(uid: alice, key: wrong), as: alice) }
        #expect(after >= 0.25 && after < 0.45)
    }

    @Test("50 wrong changePassword tries from 5 threads take the unlock schedule (95.75 s) and count toward unlock")
    func changePasswordGuesses() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let right = try enrolled(t, alice)
        let wrong = try derivedKey("guess")
        let new = try derivedKey("new")
        let schedule = (1...50).map { Daemon.failureDelay(consecutive: $0) }.reduce(0, +)
        #expect(schedule == 95.75)
        let statuses = Mutex<[Int32]>([])
        let elapsed = seconds {
            DispatchQueue.concurrentPerform(iterations: 5) { _ in
                for _ in 0..<10 {
                    let reply = t.send(
                        .changePassword(uid: alice, oldKey: wrong, newKey: new, parameters: testParameters), as: alice)
                    statuses.withLock { $0.append(statusCode(reply)) }
                }
            }
        }
        #expect(statuses.withLock { $0 } == [Int32](repeating: -25293, count: 50))
        #expect(elapsed >= schedule && elapsed < schedule + 5, "took \(elapsed) s")
        // The 51st wrong guess, through unlock, waits the longest delay, not a first one.
        let unlock = seconds { #expect(statusCode(t.send(.unlock(uid: alice, key: wrong), as: alice)) == -25293) }
        #expect(unlock >= 2.0 && unlock < 2.5, "took \(unlock) s")
        // The right key still works and starts the count again.
        #expect(
            t.send(.changePassword(uid: alice, oldKey: right, newKey: new, parameters: testParameters), as: alice)
                == .ok)
        let fresh = seconds { _ = t.send(.unlock(uid: alice, key: wrong), as: alice) }
        #expect(fresh >= 0.25 && fresh < 0.45, "took \(fresh) s")
    }

    @Test("wrong keys in rotateRecoveryKey and recover are delayed and counted like unlocks")
    func recoveryGuesses() throws {
        let t = try TestDaemon()
        defer { t.cleanUp() }
        let right = try enrolled(t, alice)
        guard case .recoveryKey(let text) = t.send(.rotateRecoveryKey(uid: alice, key: right), as: alice) else {
            Issue.record("no recovery key")
            return
        }
        let wrong = try derivedKey("guess")
        let rotate = seconds {
            #expect(statusCode(t.send(.rotateRecoveryKey(uid: alice, key: wrong), as: alice)) == -25293)
        }
        #expect(rotate >= 0.25 && rotate < 0.45, "took \(rotate) s")
        // A well-formed recovery key, of another vault.
        let bob: UInt32 = 60_052
        _ = try enrolled(t, bob)
        guard case .recoveryKey(let guess) = t.send(.rotateRecoveryKey(uid: bob, key: right), as: bob), guess != text
        else {
            Issue.record("no recovery key for bob")
            return
        }
        let recover = seconds {
            #expect(
                statusCode(
                    t.send(
                        .recover(uid: alice, recoveryKey: guess, newKey: right, parameters: testParameters), as: alice))
                    == -25293)
        }
        #expect(recover >= 0.5 && recover < 0.7, "the second guess in a row: took \(recover) s")
        let unlock = seconds { _ = t.send(.unlock(uid: alice, key: wrong), as: alice) }
        #expect(unlock >= 1.0 && unlock < 1.2, "the third guess in a row: took \(unlock) s")
    }
}
