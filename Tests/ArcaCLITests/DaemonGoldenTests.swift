import Foundation
import Testing

@testable import ArcaCLI

/// One command and what it must print and return. Dates, key ids and recovery
/// keys are normalized (see `normalized`).
struct Step: CustomStringConvertible {
    var arguments: [String]
    var stdin = ""
    var status: Int32 = 0
    var stdout = ""
    var stderr = ""

    var description: String { "arca " + arguments.joined(separator: " ") }
}

func check(_ steps: [Step], uid: UInt32? = nil, _ runner: ([String], String) throws -> Run) throws {
    for step in steps {
        let result = try runner(step.arguments, step.stdin)
        let got = Run(
            status: result.status, stdout: normalized(result.stdout, uid: uid),
            stderr: normalized(result.stderr, uid: uid))
        #expect(got == Run(status: step.status, stdout: step.stdout, stderr: step.stderr), "\(step)")
    }
}

let warning = Context.argvWarning + "\n"

extension CLIAgainstArcadBinaryTests {
    /// Golden stdout, stderr and exit status of every verb and error, against a real arcad,
    /// run as the vault's owner.
    @Suite struct Golden {
        static let item = ["-s", "mail", "-a", "alice"]
        static let inet = [
            "--internet", "--server", "example.org", "-a", "carol", "--protocol", "htps", "--port", "443",
        ]

        static func status(vault: Bool, wu: Bool, afu: Bool, recovery: Bool) -> String {
            """
            uid: <uid>
            vault: \(vault ? "yes" : "no")
            when-unlocked: \(wu ? "unlocked" : "locked")
            after-first-unlock: \(afu ? "unlocked" : "locked")
            sessions: 0
            password in sync: yes
            items not in kernel: 0
            recovery key: \(recovery ? "yes" : "no")

            """
        }

        static let mailBlock = """
            class: genp
            service: mail
            account: alice
            label: Mail
            creationDate: <date>
            modificationDate: <date>
            synchronizable: false
            accessible: when-unlocked

            """

        static let inetBlock = """
            class: inet
            account: carol
            creationDate: <date>
            modificationDate: <date>
            server: example.org
            protocol: htps
            port: 443
            synchronizable: false
            accessible: after-first-unlock

            """

        @Test func everyVerbAsTheOwner() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            try check(
                [
                    Step(
                        arguments: ["status"], stdout: Self.status(vault: false, wu: false, afu: false, recovery: false)
                    ),
                    Step(arguments: ["get"] + Self.item, status: 46, stderr: "arca: get: locked\n"),
                    Step(arguments: ["add"] + Self.item, stdin: "x", status: 46, stderr: "arca: add: locked\n"),
                    Step(
                        arguments: ["passwd"], stdin: "a\nb\n", status: 46,
                        stderr: "arca: passwd: locked (no vault; create one with arca init)\n"),
                    Step(arguments: ["init", "--no-recovery-key"], stdin: "pw\n"),
                    Step(
                        arguments: ["init"], stdin: "pw\n", status: 45, stderr: "arca: init: you already have a vault\n"
                    ),
                    Step(arguments: ["status"], stdout: Self.status(vault: true, wu: true, afu: true, recovery: false)),
                    Step(arguments: ["add"] + Self.item, stdin: "hunter2\n"),
                    Step(
                        arguments: ["add"] + Self.item, stdin: "x", status: 45,
                        stderr: "arca: add: the item already exists\n"),
                    Step(arguments: ["add", "-U", "-l", "Mail"] + Self.item, stdin: "hunter3"),
                    Step(arguments: ["get"] + Self.item, stdout: "hunter3"),
                    Step(arguments: ["get", "--no-kernel"] + Self.item, stdout: "hunter3"),
                    // The kernel path never opens the socket: a dead socket path does not matter to it.
                    Step(arguments: ["get", "--socket", "/nonexistent/arcad.sock"] + Self.item, stdout: "hunter3"),
                    Step(
                        arguments: ["get", "--no-kernel", "--socket", "/nonexistent/arcad.sock"] + Self.item,
                        status: 69,
                        stderr: "arca: get: arcad is not running (/nonexistent/arcad.sock: No such file or directory)\n"
                    ),
                    Step(arguments: ["get", "--json"] + Self.item, stdout: "{\"secret\":\"hunter3\"}\n"),
                    Step(
                        arguments: ["get", "-s", "mail", "-a", "nobody"], status: 44,
                        stderr: "arca: get: no such item\n"),
                    Step(arguments: ["find", "-s", "mail"], stdout: Self.mailBlock),
                    Step(arguments: ["find", "-s", "nothing"], status: 44, stderr: "arca: find: no such item\n"),
                    Step(arguments: ["update"] + Self.item, stdin: "hunter4"),
                    Step(arguments: ["get"] + Self.item, stdout: "hunter4"),
                    Step(
                        arguments: ["update", "-s", "mail", "-a", "nobody", "--keep-secret", "-l", "x"], status: 44,
                        stderr: "arca: update: no such item\n"),
                    Step(arguments: ["add", "--accessible", "after-first-unlock"] + Self.inet, stdin: "x"),
                    Step(arguments: ["get"] + Self.inet, stdout: "x"),
                    Step(arguments: ["list"], stdout: Self.mailBlock + "\n" + Self.inetBlock),
                    Step(
                        arguments: ["show"],
                        stdout: """
                            Arca keyrings of uid <uid>
                            <id> 1f3f0000  <uid> 65534  keyring: _uid.<uid>
                            <id> 0b3f0000     0  <uid>   \\_ keyring: arca:afu
                            <id> 0b3f0000     0  <uid>       \\_ user: arca:inet:example.org:carol:proto=htps:port=443
                            <id> 0b3f0000     0  <uid>   \\_ keyring: arca:wu
                            <id> 0b3f0000     0  <uid>       \\_ user: arca:genp:mail:alice

                            """),
                    Step(arguments: ["lock"]),
                    Step(arguments: ["get"] + Self.item, status: 46, stderr: "arca: get: locked\n"),
                    Step(arguments: ["get", "--no-kernel"] + Self.item, status: 46, stderr: "arca: get: locked\n"),
                    Step(arguments: ["get"] + Self.inet, stdout: "x"),
                    Step(
                        arguments: ["status"], stdout: Self.status(vault: true, wu: false, afu: true, recovery: false)),
                    Step(arguments: ["unlock"], stdin: "wrong\n", status: 1, stderr: "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock"], stdin: "pw\n"),
                    Step(arguments: ["get"] + Self.item, stdout: "hunter4"),
                    Step(
                        arguments: ["passwd"], stdin: "wrong\nnew\n", status: 1,
                        stderr: "arca: passwd: wrong password\n"),
                    Step(arguments: ["passwd"], stdin: "pw\nnew\n"),
                    Step(arguments: ["lock"]),
                    Step(arguments: ["unlock"], stdin: "pw\n", status: 1, stderr: "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock"], stdin: "new\n"),
                    Step(arguments: ["recovery"], stdout: "recovery key: no\n"),
                    Step(
                        arguments: ["recovery", "--rotate"], stdin: "new\n",
                        stdout: "recovery key (shown once; keep it somewhere safe):\n<recovery key>\n"),
                    Step(arguments: ["recovery"], stdout: "recovery key: yes\n"),
                    Step(arguments: ["delete", "-s", "mail"]),
                    Step(arguments: ["delete", "-s", "mail"], status: 44, stderr: "arca: delete: no such item\n"),
                    Step(arguments: ["clear"]),
                    Step(arguments: ["list"]),
                    Step(arguments: ["clear"]),
                    Step(arguments: ["lock", "--all"]),
                    Step(
                        arguments: ["status"], stdout: Self.status(vault: true, wu: false, afu: false, recovery: true)),
                    Step(arguments: ["add"] + Self.item, stdin: "x", status: 46, stderr: "arca: add: locked\n"),
                ], uid: arcad.owner.uid, arcad.arca)
        }

        @Test func securityCompatibilityVerbs() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let listing = """
                keychain: "arca"
                version: 512
                class: "genp"
                attributes:
                    "acct"<blob>="bob"
                    "cdat"<timedate>="<date>"
                    "desc"<blob>="kind"
                    "icmt"<blob>="note"
                    "labl"<blob>="VPN"
                    "mdat"<timedate>="<date>"
                    "svce"<blob>="vpn"

                """
            let vpn = ["-a", "bob", "-s", "vpn"]
            try check(
                [
                    Step(arguments: ["init", "--no-recovery-key"], stdin: "pw\n"),
                    Step(
                        arguments: ["add-generic-password"] + vpn + [
                            "-w", "s3cret", "-l", "VPN", "-j", "note", "-D", "kind",
                        ],
                        stderr: warning),
                    Step(
                        arguments: ["add-generic-password"] + vpn + ["-w"], stdin: "other", status: 45,
                        stderr: "arca: add-generic-password: the item already exists\n"),
                    Step(arguments: ["add-generic-password", "-U"] + vpn + ["-w"], stdin: "s3cret2"),
                    Step(arguments: ["find-generic-password"] + vpn, stdout: listing),
                    Step(arguments: ["find-generic-password"] + vpn + ["-w"], stdout: "s3cret2\n"),
                    Step(
                        arguments: ["find-generic-password"] + vpn + ["-g"], stdout: listing,
                        stderr: "password: \"s3cret2\"\n"),
                    Step(arguments: ["delete-generic-password"] + vpn, stdout: "password has been deleted.\n"),
                    Step(
                        arguments: ["find-generic-password"] + vpn, status: 44,
                        stderr: "arca: find-generic-password: no such item\n"),
                    Step(
                        arguments: ["delete-generic-password"] + vpn, status: 44,
                        stderr: "arca: delete-generic-password: no such item\n"),
                    Step(
                        arguments: [
                            "add-internet-password", "-a", "carol", "-s", "example.org", "-r", "htps", "-P", "443",
                            "-w",
                        ],
                        stdin: "x"),
                    Step(
                        arguments: ["find-internet-password", "-a", "carol", "-s", "example.org", "-w"], stdout: "x\n"),
                    Step(
                        arguments: ["delete-internet-password", "-s", "example.org"],
                        stdout: "password has been deleted.\n"),
                    Step(
                        arguments: ["find-internet-password", "-s", "example.org"], status: 44,
                        stderr: "arca: find-internet-password: no such item\n"),
                    Step(arguments: ["lock-keychain"]),
                    Step(
                        arguments: ["unlock-keychain", "-p", "bad"], status: 1,
                        stderr: warning + "arca: unlock: wrong password\n"),
                    Step(arguments: ["unlock-keychain", "-p", "pw"], stderr: warning),
                    Step(arguments: ["unlock-keychain"], stdin: "pw\n"),
                    Step(arguments: ["add-generic-password"] + vpn + ["-w"], stdin: "z"),
                    Step(arguments: ["lock-keychain", "-a"]),
                    Step(
                        arguments: ["find-generic-password"] + vpn, status: 46,
                        stderr: "arca: find-generic-password: locked\n"),
                ], uid: arcad.owner.uid, arcad.arca)
        }
    }
}
