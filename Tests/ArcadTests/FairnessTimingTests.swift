import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

/// One user's flood of wrong unlocks must not lock another user out: the real
/// arcad and `arca` binaries, two throwaway users. Holds a stopwatch, so it
/// runs alone (after the parallel suites).
@Suite("arcad binary: Argon2id fairness: another user's flood never refuses or stalls an unlock (root)", .serialized)
struct FairnessTimingTests {
    /// `arca unlock` as `user` with `password` on stdin: exit status, stderr, seconds.
    static func unlock(_ user: TestUser, _ socket: String, _ password: String) throws -> (Int32, String, Double) {
        let start = Date()
        let result = try user.run([builtExecutable("arca"), "unlock", "--socket", socket], stdin: password + "\n")
        return (result.status, result.stderr, Date().timeIntervalSince(start))
    }

    @Test("6 threads of wrong unlocks from user A for 6 s; user B unlocks 3 times, each ≤ 3 s, never refused")
    func floodDoesNotBlockAnotherUser() throws {
        try withThrowawayUsers(2, prefix: "fairt", cleanup: { try? KeyringLayout().purge(user: $0.uid) }) { users in
            let (a, b) = (users[0], users[1])
            let arcad = try ArcadProcess()
            defer { arcad.stop() }
            // A's vault costs what kdf_max_cost allows (16 passes × 64 MiB): each of A's
            // derivations is long. B's is the cheapest arcad accepts.
            var costly = e2eParameters
            costly.opsLimit = 16
            let aKey = try deriveKey("a-password", costly)
            #expect(try arcad.send(.enroll(uid: a.uid, key: aKey, parameters: costly)) == .ok)
            let bKey = try derive("b-password")
            #expect(try arcad.send(.enroll(uid: b.uid, key: bKey, parameters: e2eParameters)) == .ok)
            #expect(try arcad.send(.lock(uid: b.uid, classes: .whenUnlocked)) == .ok)

            let deadline = Date().addingTimeInterval(6)
            let floodStatuses = Mutex<[Int32: Int]>([:])
            let floodMessages = Mutex<Set<String>>([])
            let group = DispatchGroup()
            for _ in 0..<6 {
                DispatchQueue.global().async(group: group) {
                    while Date() < deadline {
                        guard let (status, stderr, _) = try? Self.unlock(a, arcad.socket, "wrong") else { continue }
                        floodStatuses.withLock { $0[status, default: 0] += 1 }
                        floodMessages.withLock { _ = $0.insert(stderr) }
                    }
                }
            }
            usleep(1_000_000)  // the flood is under way
            var bTimes: [Double] = []
            for _ in 0..<3 {
                let (status, stderr, seconds) = try Self.unlock(b, arcad.socket, "b-password")
                #expect(status == 0, "B refused: \(stderr)")
                #expect(stderr == "")
                bTimes.append(seconds)
            }
            group.wait()
            print("B's unlocks during A's flood (s): \(bTimes.map { String(format: "%.2f", $0) })")
            print(
                "A's flood, exit statuses: \(floodStatuses.withLock { $0 }); "
                    + "messages: \(floodMessages.withLock { $0 })")
            for seconds in bTimes { #expect(seconds <= 3.0, "B's unlock took \(seconds) s") }
            // A only ever hears "wrong password" (1) or "busy" (75), never "not running" (69).
            let statuses = Set(floodStatuses.withLock { $0.keys })
            #expect(statuses.isSubset(of: [1, 75]), "A's exit statuses: \(statuses)")
            #expect(floodMessages.withLock { $0.allSatisfy { !$0.contains("not running") } })
            // arcad still works for A.
            #expect(try arcad.send(.unlock(uid: a.uid, key: aKey)) == .ok)
        }
    }
}

func deriveKey(_ password: String, _ parameters: KeyDerivationParameters) throws -> [UInt8] {
    let secret = try Array(password.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    let key = try Argon2id.deriveKey(
        password: secret,
        parameters: KDFParameters(
            opsLimit: parameters.opsLimit, memoryLimit: Int(parameters.memoryLimit), salt: parameters.salt))
    return key.withUnsafeBytes { Array($0) }
}
