import Foundation
import Testing

@testable import ArcaCLI

/// JSON schemas, secrets kept out of argv and the environment, and isolation
/// between users, against a real arcad.
extension CLIAgainstArcadBinaryTests {
    @Suite struct Behaviour {
        func object(_ text: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        }

        @Test("arca init shows a recovery key once, and that key recovers the vault")
        func initShowsAWorkingRecoveryKey() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let made = try arcad.arca(["init"], stdin: "pw\n")
            #expect(made.status == 0)
            let lines = made.stdout.split(separator: "\n").map(String.init)
            #expect(lines.count == 2)
            #expect(lines.first == "recovery key (shown once; keep it somewhere safe):")
            let key = try #require(lines.last)
            #expect(key.count >= 52 && !key.contains("pw"))
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "hunter2").status == 0)
            #expect(try arcad.arca(["lock", "--all"]).status == 0)
            #expect(try arcad.arca(["passwd", "--recover"], stdin: "\(key)\nnew-pw\n").status == 0)
            #expect(try arcad.arca(["get", "-s", "mail", "-a", "alice"]).stdout == "hunter2")
        }

        @Test func jsonOutputMatchesItsSchema() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init"], stdin: "pw\n").status == 0)
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice", "-l", "Mail"], stdin: "hunter2").status == 0)
            // Bytes that are not UTF-8 go through printf: the test's pipe writes Strings.
            let printf = try run(
                arcad.owner.command(["/bin/sh", "-c", "printf '\\001\\377' | \(arcaPath) add -s bin -a b"]),
                environment: ["ARCA_SOCKET": arcad.socket])
            #expect(printf.status == 0, "\(printf)")
            #expect(
                try arcad.arca(["add", "--internet", "--server", "h", "-a", "c", "--port", "22"], stdin: "x").status
                    == 0)

            let get = try object(try arcad.arca(["get", "-s", "mail", "-a", "alice", "--json"]).stdout)
            #expect(get as? [String: String] == ["secret": "hunter2"])

            let list = try #require(
                try JSONSerialization.jsonObject(with: Data(try arcad.arca(["list", "--json", "-w"]).stdout.utf8))
                    as? [[String: Any]])
            #expect(list.count == 3)
            let strings = [
                "class", "service", "account", "label", "server", "accessible", "creationDate", "modificationDate",
                "secret", "secretBase64",
            ]
            for item in list {
                for key in strings where item[key] != nil { #expect(item[key] is String, "\(key) in \(item)") }
                #expect(item["synchronizable"] is Bool)
                #expect(["genp", "inet"].contains(item["class"] as? String))
                #expect(
                    (item["creationDate"] as? String)?.range(
                        of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"#, options: .regularExpression) != nil)
                #expect(item["accessible"] as? String == "when-unlocked")
            }
            let binary = try #require(list.first { $0["service"] as? String == "bin" })
            #expect(binary["secretBase64"] as? String == "Af8=" && binary["secret"] == nil)
            let inet = try #require(list.first { $0["class"] as? String == "inet" })
            #expect(inet["port"] as? Int == 22 && inet["server"] as? String == "h")
            let withoutSecrets = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(try arcad.arca(["find", "-s", "mail", "--json"]).stdout.utf8))
                    as? [[String: Any]])
            #expect(withoutSecrets.count == 1 && withoutSecrets[0]["secret"] == nil)
            #expect(withoutSecrets[0]["label"] as? String == "Mail")

            let status = try object(try arcad.arca(["status", "--json"]).stdout)
            #expect(
                Set(status.keys) == [
                    "uid", "hasVault", "unlocked", "sessionCount", "passwordOutOfSync",
                    "itemsNotInKernel", "hasRecoveryKey", "lockIncomplete",
                ])
            #expect(status["lockIncomplete"] as? [String] == [])
            #expect(status["uid"] as? Int == Int(arcad.owner.uid) && status["hasVault"] as? Bool == true)
            #expect(status["unlocked"] as? [String] == ["when-unlocked", "after-first-unlock"])
            #expect(status["sessionCount"] as? Int == 0 && status["itemsNotInKernel"] as? Int == 0)
            // `arca init` made a recovery key (and showed it once).
            #expect(status["passwordOutOfSync"] as? Bool == false && status["hasRecoveryKey"] as? Bool == true)

            #expect(
                try object(try arcad.arca(["recovery", "--json"]).stdout) as? [String: Bool] == ["hasRecoveryKey": true]
            )
            let rotated = try object(try arcad.arca(["recovery", "--rotate", "--json"], stdin: "pw\n").stdout)
            #expect((rotated["recoveryKey"] as? String)?.isEmpty == false)

            let show = try object(try arcad.arca(["show", "--json"]).stdout)
            let keys = try #require(show["keys"] as? [[String: Any]])
            #expect(show["uid"] as? Int == Int(arcad.owner.uid))
            #expect(keys.first?["depth"] as? Int == 0 && keys.first?["type"] as? String == "keyring")
            for key in keys {
                #expect(Set(key.keys) == ["id", "depth", "type", "permissions", "uid", "gid", "description"])
                #expect(key["id"] is Int && key["permissions"] is String && key["description"] is String)
            }
            let descriptions = keys.compactMap { $0["description"] as? String }
            #expect(descriptions.contains("arca:genp:mail:alice") && descriptions.contains("arca:wu"))
            #expect(
                try object(try arcad.arca(["version", "--json"]).stdout) as? [String: String] == ["version": "0.1.0"])
        }

        /// `arca add` blocks reading stdin until its end: while it holds the secret,
        /// its argv and environment are read from /proc and must not contain it.
        @Test func secretNeverInArgvOrEnvironment() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init"], stdin: "pw\n").status == 0)
            let secret = "s3cret-\(UInt32.random(in: 0..<UInt32.max))"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = Array(arcad.owner.command([arcaPath, "add", "-s", "argv", "-a", "check"]).dropFirst())
            process.environment = ["ARCA_SOCKET": arcad.socket, "PATH": "/usr/bin:/bin"]
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            try input.fileHandleForWriting.write(contentsOf: Data(secret.utf8))
            usleep(200_000)
            // setpriv execs arca in the same process.
            let pid = process.processIdentifier
            let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
            let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
            #expect(!cmdline.isEmpty)
            #expect(cmdline.range(of: Data(secret.utf8)) == nil)
            #expect(environ.range(of: Data(secret.utf8)) == nil)
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(try arcad.arca(["get", "-s", "argv", "-a", "check"]).stdout == secret)
        }

        @Test func lockedIsNeverNotFound() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init"], stdin: "pw\n").status == 0)
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "x").status == 0)
            #expect(try arcad.arca(["lock"]).status == 0)
            for arguments in [
                ["get", "-s", "mail", "-a", "alice"], ["get", "--no-kernel", "-s", "mail", "-a", "alice"],
                ["get", "-s", "mail"], ["find", "-s", "mail"], ["find-generic-password", "-s", "mail", "-w"],
                ["add", "-s", "new", "-a", "x"],
            ] {
                #expect(try arcad.arca(arguments, stdin: "y").status == 46, "\(arguments)")
            }
        }

        @Test func usersAreIsolated() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let user = arcad.owner
            #expect(try arcad.asRoot(["init"], stdin: "pw\n").status == 0)
            #expect(try arcad.asRoot(["add", "-s", "mail", "-a", "alice"], stdin: "root-secret").status == 0)
            try check(
                [
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], status: 46, stderr: "arca: get: locked\n"),
                    Step(arguments: ["status", "--user", "0"], status: 47, stderr: "arca: status: not allowed\n"),
                    Step(arguments: ["init", "--no-recovery-key"], stdin: "upw\n"),
                    Step(
                        arguments: ["get", "-s", "mail", "-a", "alice"], status: 44, stderr: "arca: get: no such item\n"
                    ),
                    Step(arguments: ["add", "-s", "mail", "-a", "alice"], stdin: "user-secret"),
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], stdout: "user-secret"),
                    Step(arguments: ["get", "--no-kernel", "-s", "mail", "-a", "alice"], stdout: "user-secret"),
                    Step(arguments: ["lock", "--all"]),
                    Step(arguments: ["get", "-s", "mail", "-a", "alice"], status: 46, stderr: "arca: get: locked\n"),
                ], { try arcad.arca(as: user, $0, stdin: $1) })
            #expect(try arcad.asRoot(["get", "-s", "mail", "-a", "alice"]).stdout == "root-secret")
            let status = try object(try arcad.asRoot(["status", "--user", user.name, "--json"]).stdout)
            #expect(status["uid"] as? Int == Int(user.uid) && status["hasVault"] as? Bool == true)
            #expect(status["unlocked"] as? [String] == [])
        }
    }
}
