import Foundation
import Testing

@testable import ArcaCLI

/// The built binary, without a daemon: help, usage errors, "arcad not running".
@Suite struct BinaryTests {
    static let missingSocket = "/nonexistent/arcad.sock"

    @Test func helpAndVersion() throws {
        #expect(try arca(["--help"]) == Run(status: 0, stdout: Help.overview() + "\n", stderr: ""))
        #expect(
            try arca(["help", "get"])
                == Run(status: 0, stdout: Help.verb(CommandTable.verb(named: "get")!) + "\n", stderr: ""))
        #expect(try arca(["version"]) == Run(status: 0, stdout: "arca 0.1.0\n", stderr: ""))
    }

    @Test func usageErrorForEveryVerb() throws {
        // `fleet` hands its arguments to arca-fleetd, which reports its own usage errors (below).
        for verb in CommandTable.verbs where verb.name != HandOver.fleet.verb {
            let result = try arca([verb.name, "--bogus"])
            #expect(
                result
                    == Run(
                        status: 2, stdout: "",
                        stderr: "error: unknown option '--bogus' for '\(verb.name)'\nusage: \(verb.synopsis)\n"),
                "\(verb.name)")
        }
        #expect(
            try arca([])
                == Run(status: 0, stdout: Help.overview() + "\n", stderr: ""))
        // arca execs the arca-fleetd built beside it, with the arguments after `fleet`.
        let fleet = try arca(["fleet", "--bogus"])
        #expect(fleet.status == 2)
        #expect(fleet.stderr.hasPrefix("arca fleet: unknown option --bogus\nusage: arca fleet [--conf PATH] VERB"))
        // In-process (CLI.run) nothing is exec'd: a usage error, never another verb.
        var output = Output(standardOutputIsTerminal: false)
        #expect(CLI.run(["fleet", "hosts"], output: &output) == 2)
        #expect(
            String(decoding: output.standardError, as: UTF8.self)
                == "error: 'fleet' runs arca-fleetd; see arca-fleetd(8)\n")
        #expect(
            try arca(["get", "--account", "x"])
                == Run(status: 2, stdout: "", stderr: "error: 'get' needs --service\nusage: arca get [options]\n"))
    }

    /// arca-fleetd (through `arca fleet`) refuses an unknown verb, naming it, before it reads
    /// fleet.conf: an unreadable (a directory) or garbage fleet.conf still gets the verb message.
    @Test func fleetUnknownVerbBeforeFleetConf() throws {
        let directory = "/tmp/arca-cli-fleet-conf-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = directory + "/fleet.conf"
        try Data("\u{1}garbage\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let usage = "usage: arca fleet [--conf PATH] VERB [options]"
        for conf in [directory, garbage] {
            let run = try arca(["fleet", "--conf", conf, "frobnicate"])
            #expect(run.status == 2, "\(conf)")
            #expect(run.stdout == "")
            #expect(run.stderr.hasPrefix("arca fleet: unknown verb frobnicate\n\(usage)"), "\(run)")
        }
        // A known verb with the same fleet.conf paths meets them.
        #expect(
            try arca(["fleet", "--conf", directory, "refresh"]).stderr.hasPrefix(
                "arca fleet: cannot read \(directory)\n"))
        #expect(
            try arca(["fleet", "--conf", garbage, "refresh"]).stderr.hasPrefix(
                "arca fleet: fleet.conf line 1: not a known `key = value`\n"))
    }

    @Test func importHandsOverOnlyTheSecretServiceSource() throws {
        #expect(HandOver.matching(["import", "--from", "secret-service"])?.handOver.program == "arca-secretd")
        #expect(
            HandOver.matching(["import", "--json", "--from=secret-service"])?.arguments
                == ["--import", "--json", "--from=secret-service"])
        #expect(HandOver.matching(["import", "--from", "backup.arca"]) == nil)
        #expect(HandOver.matching(["import", "--", "--from", "secret-service"]) == nil)
        #expect(HandOver.matching(["get", "--from", "secret-service"]) == nil)
        #expect(HandOver.matching(["fleet", "hosts"])?.handOver.program == "arca-fleetd")
        #expect(HandOver.matching(["fleet", "hosts"])?.arguments == ["hosts"])
        // The socket before the verb goes along, ahead of the words after the verb (so that
        // a socket after the verb still wins, as in arca's own parser).
        #expect(
            HandOver.matching(["--socket", "/a.sock", "import", "--from", "secret-service", "--json"])?.arguments
                == ["--import", "--socket", "/a.sock", "--from", "secret-service", "--json"])
        #expect(
            HandOver.matching(["--socket=/a.sock", "import", "--from=secret-service", "--socket", "/b.sock"])?.arguments
                == ["--import", "--socket", "/a.sock", "--from=secret-service", "--socket", "/b.sock"])
        #expect(HandOver.matching(["--socket", "/a.sock", "import", "--from", "backup.arca"]) == nil)
        #expect(HandOver.matching(["--help", "import", "--from", "secret-service"]) == nil)
        #expect(HandOver.matching(["--socket"]) == nil)
        // arca-fleetd reads its socket from fleet.conf: arca keeps the line (and refuses it).
        #expect(HandOver.matching(["--socket", "/a.sock", "fleet", "hosts"]) == nil)
        // A backup file stays with arca, which refuses the Secret Service import's options.
        #expect(
            try arca(["import", "--from", "backup.arca", "--dry-run"])
                == Run(
                    status: 2, stdout: "",
                    stderr: "error: --dry-run is for 'import --from secret-service', not a backup file\n"
                        + "usage: arca import [options]\n"))
        // arca execs the arca-secretd built beside it, which parses the rest.
        let run = try arca(["import", "--from", "secret-service", "--bogus"])
        #expect(run.status == 2)
        #expect(
            run.stderr.hasPrefix(
                "arca-secretd: import: unknown option --bogus\nusage: arca import --from secret-service [--bus-name NAME]"
            ))
        // So does a socket given before the verb (arca kept this line and refused it before).
        let socketFirst = try arca(["--socket", Self.missingSocket, "import", "--from", "secret-service", "--bogus"])
        #expect(socketFirst.status == 2)
        #expect(socketFirst.stderr.hasPrefix("arca-secretd: import: unknown option --bogus\nusage: arca import"))
        var output = Output(standardOutputIsTerminal: false)
        #expect(CLI.run(["import", "--from", "secret-service"], output: &output) == 2)
        #expect(
            String(decoding: output.standardError, as: UTF8.self)
                == "error: 'import --from secret-service' runs arca-secretd --import; see arca-secretd(1)\n"
                + "usage: arca import [options]\n")
    }

    /// Each verb that talks to arcad, with the name it reports and the stdin it needs.
    static let daemonVerbs: [([String], String, String)] = [
        (["init"], "init", "pw\n"),
        (["add", "-s", "mail", "-a", "alice"], "add", "secret"),
        (["get", "-s", "mail", "-a", "alice"], "get", ""),
        (["get", "-s", "mail", "-a", "alice", "--no-kernel"], "get", ""),
        (["find", "-s", "mail"], "find", ""),
        (["update", "-s", "mail", "-a", "alice"], "update", "new"),
        (["delete", "-s", "mail"], "delete", ""),
        (["list"], "list", ""),
        (["clear"], "clear", ""),
        (["lock"], "lock", ""),
        (["lock", "--all"], "lock", ""),
        (["unlock"], "unlock", "pw\n"),
        (["status"], "status", ""),
        (["passwd"], "passwd", "a\nb\n"),
        (["recovery"], "recovery", ""),
        (["recovery", "--rotate"], "recovery", "pw\n"),
        (["add-generic-password", "-s", "mail", "-a", "alice", "-w"], "add-generic-password", "secret"),
        (["find-generic-password", "-s", "mail", "-a", "alice"], "find-generic-password", ""),
        (["delete-generic-password", "-s", "mail", "-a", "alice"], "delete-generic-password", ""),
        (["add-internet-password", "-s", "h", "-a", "alice", "-w"], "add-internet-password", "secret"),
        (["find-internet-password", "-s", "h", "-a", "alice"], "find-internet-password", ""),
        (["delete-internet-password", "-s", "h", "-a", "alice"], "delete-internet-password", ""),
        (["lock-keychain"], "lock", ""),
        (["unlock-keychain"], "unlock", "pw\n"),
    ]

    @Test func arcadNotRunningIs69() throws {
        for (arguments, what, stdin) in Self.daemonVerbs {
            let expected = Run(
                status: 69, stdout: "",
                stderr: "arca: \(what): arcad is not running (\(Self.missingSocket): No such file or directory)\n")
            #expect(try arca(arguments + ["--socket", Self.missingSocket], stdin: stdin) == expected, "\(arguments)")
            #expect(
                try arca(arguments, stdin: stdin, environment: ["ARCA_SOCKET": Self.missingSocket]) == expected,
                "ARCA_SOCKET \(arguments)")
        }
    }

    @Test func passwordOnTheCommandLineWarns() throws {
        let result = try arca(
            ["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2", "--socket", Self.missingSocket])
        #expect(
            result
                == Run(
                    status: 69, stdout: "",
                    stderr: Context.argvWarning + "\n"
                        + "arca: add-generic-password: arcad is not running (\(Self.missingSocket): No such file or directory)\n"
                ))
        let unlock = try arca(["unlock-keychain", "-p", "pw", "--socket", Self.missingSocket])
        #expect(unlock.status == 69)
        #expect(unlock.stderr.hasPrefix(Context.argvWarning + "\n"))
    }

    @Test func emptyStdinIsAnError() throws {
        #expect(
            try arca(["unlock", "--socket", Self.missingSocket])
                == Run(status: 1, stdout: "", stderr: "arca: password: no password on stdin\n"))
    }
}
