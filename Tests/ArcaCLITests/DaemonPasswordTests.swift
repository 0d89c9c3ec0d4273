import ArcaClient
import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `passwd --resync` after an administrator reset, and `passwd --recover`.
    @Suite struct Password {
        /// What root's PAM stack sends on `passwd user`: the new login password's key, without the old one.
        func administratorReset(_ arcad: TestArcad, to password: String) throws {
            let client = try ArcadClient(path: arcad.socket)
            guard case .kdfParameters(let current?) = try client.send(.kdfParameters(uid: arcad.owner.uid)) else {
                Issue.record("no KDF parameters")
                return
            }
            let salt = SecureRandom.bytes(count: ProtocolLimits.saltLength)
            var bytes = Array(password.utf8)
            let key = try Argon2id.deriveKey(
                password: try SecretBytes(consuming: &bytes),
                parameters: KDFParameters(
                    opsLimit: current.opsLimit, memoryLimit: Int(current.memoryLimit), salt: salt))
            let parameters = KeyDerivationParameters(
                opsLimit: current.opsLimit, memoryLimit: current.memoryLimit, salt: salt)
            let reply = try client.send(
                .passwordReset(uid: arcad.owner.uid, newKey: key.withUnsafeBytes { Array($0) }, parameters: parameters))
            #expect(reply == .ok)
        }

        @Test func resyncAndRecover() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let inSync = "password in sync: yes\n"
            let outOfSync = "password in sync: no (run arca passwd --resync)\n"
            #expect(try arcad.arca(["init"], stdin: "old\n").status == 0)
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "kept").status == 0)
            try administratorReset(arcad, to: "login")
            #expect(try arcad.arca(["status"]).stdout.contains(outOfSync))
            try check(
                [
                    Step(
                        arguments: ["passwd", "--resync", "--recover"], status: 2,
                        stderr: "error: --resync and --recover exclude each other\nusage: arca passwd [options]\n"),
                    Step(
                        arguments: ["passwd", "--resync"], stdin: "wrong\nlogin\n", status: 1,
                        stderr: "arca: passwd: wrong password\n"),
                    Step(arguments: ["passwd", "--resync"], stdin: "old\nlogin\n"),
                    Step(arguments: ["lock", "--all"]),
                    Step(arguments: ["unlock"], stdin: "old\n", status: 1, stderr: "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock"], stdin: "login\n"),
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], stdout: "kept"),
                ], uid: arcad.owner.uid, arcad.arca)
            #expect(try arcad.arca(["status"]).stdout.contains(inSync))

            let rotated = try arcad.arca(["recovery", "--rotate", "--json"], stdin: "login\n")
            let json = try JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: String]
            let recoveryKey = try #require(json?["recoveryKey"])
            try check(
                [
                    Step(arguments: ["lock", "--all"]),
                    Step(arguments: ["passwd", "--recover"], stdin: recoveryKey + "\nfresh\n"),
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], stdout: "kept"),
                    Step(arguments: ["lock", "--all"]),
                    Step(arguments: ["unlock"], stdin: "login\n", status: 1, stderr: "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock"], stdin: "fresh\n"),
                ], uid: arcad.owner.uid, arcad.arca)
            let bad = try arcad.arca(["passwd", "--recover"], stdin: "not-a-key\nx\n")
            #expect(bad.status == 1 && bad.stderr.hasPrefix("arca: passwd: "), "\(bad)")
        }
    }
}
