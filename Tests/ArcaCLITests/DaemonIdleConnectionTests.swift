import ArcaClient
import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

extension CLIAgainstArcadBinaryTests {
    /// arcad closes a connection that sends no request within client_timeout_ms. A verb that
    /// asks arcad something, then prompts or derives a key, must not send its next request on
    /// that closed connection ("arcad closed the connection"). arcad here waits 100 ms and
    /// the password arrives 500 ms after `arca` starts, as from a human typing slowly.
    @Suite struct IdleConnection {
        static let config = "client_timeout_ms = 100\n"
        static let delay: useconds_t = 500_000
        static let done = Run(status: 0, stdout: "", stderr: "")

        /// An arcad that waits 100 ms for a request, and a throwaway owner.
        func start() throws -> TestArcad { try TestArcad(ownerPrefix: "idlecli", config: Self.config) }

        /// Runs `arca` as `arcad`'s owner; `stdin` is written after `delay`, then closed.
        func slowly(_ arcad: TestArcad, _ arguments: [String], stdin: String) throws -> Run {
            try run(
                arcad.owner.command([arcaPath] + arguments), stdin: stdin, environment: ["ARCA_SOCKET": arcad.socket],
                delay: Self.delay)
        }

        /// The owner's vault with `password`, made by root as pam_arca does (not by `arca init`,
        /// so each verb is tested on its own), and one item.
        func enroll(_ arcad: TestArcad, password: String) throws {
            let salt = SecureRandom.bytes(count: ProtocolLimits.saltLength)
            let parameters = KeyDerivationParameters(
                opsLimit: 1, memoryLimit: UInt64(KDFParameters.memoryFloor), salt: salt)
            var bytes = Array(password.utf8)
            let key = try Argon2id.deriveKey(
                password: try SecretBytes(consuming: &bytes),
                parameters: KDFParameters(opsLimit: 1, memoryLimit: KDFParameters.memoryFloor, salt: salt))
            let client = try ArcadClient(path: arcad.socket)
            let reply = try client.send(
                .enroll(uid: arcad.owner.uid, key: key.withUnsafeBytes { Array($0) }, parameters: parameters))
            #expect(reply == .ok)
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "kept") == Self.done)
        }

        /// Only `good` unlocks the vault (`bad` does not), and the item is there.
        func unlocks(_ arcad: TestArcad, with good: String, not bad: String) throws {
            try check(
                [
                    Step(arguments: ["lock", "--all"]),
                    Step(arguments: ["unlock"], stdin: bad + "\n", status: 1, stderr: "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock"], stdin: good + "\n"),
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], stdout: "kept"),
                ], uid: arcad.owner.uid, arcad.arca)
        }

        @Test("init: kdfParameters, a slow password, calibration, enroll")
        func initWithSlowPassword() throws {
            let arcad = try start()
            defer { arcad.stop() }
            let run = try slowly(arcad, ["init"], stdin: "first\n")
            // Before the fix: status 46, "arca: init: arcad closed the connection".
            let shown = Run(
                status: 0, stdout: "recovery key (shown once; keep it somewhere safe):\n<recovery key>\n", stderr: "")
            #expect(Run(status: run.status, stdout: normalized(run.stdout), stderr: run.stderr) == shown, "\(run)")
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "kept") == Self.done)
            try unlocks(arcad, with: "first", not: "wrong")
        }

        @Test("passwd: kdfParameters, two slow passwords, two derivations, changePassword")
        func passwdWithSlowPasswords() throws {
            let arcad = try start()
            defer { arcad.stop() }
            try enroll(arcad, password: "first")
            let run = try slowly(arcad, ["passwd"], stdin: "first\nsecond\n")
            #expect(run == Self.done, "\(run)")
            try unlocks(arcad, with: "second", not: "first")
        }

        @Test("recovery --rotate and passwd --recover with a slow secret")
        func recoveryWithSlowSecrets() throws {
            let arcad = try start()
            defer { arcad.stop() }
            try enroll(arcad, password: "first")
            let rotated = try slowly(arcad, ["recovery", "--rotate", "--json"], stdin: "first\n")
            #expect(rotated.status == 0 && rotated.stderr.isEmpty, "\(rotated)")
            let json = try? JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: String]
            let recoveryKey = try #require(json?["recoveryKey"])
            #expect(try arcad.arca(["lock", "--all"]) == Self.done)
            let recovered = try slowly(arcad, ["passwd", "--recover"], stdin: recoveryKey + "\nthird\n")
            #expect(recovered == Self.done, "\(recovered)")
            try unlocks(arcad, with: "third", not: "first")
        }
    }
}
