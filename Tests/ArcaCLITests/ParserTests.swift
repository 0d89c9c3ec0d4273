import ArcaProtocol
import Testing

@testable import ArcaCLI

/// Runs `arguments` in-process and returns (status, stdout, stderr).
func runInProcess(_ arguments: [String]) -> (Int32, String, String) {
    var output = Output()
    let status = CLI.run(arguments, output: &output)
    return (
        status, String(decoding: output.standardOutput, as: UTF8.self),
        String(decoding: output.standardError, as: UTF8.self)
    )
}

@Suite struct ParserTests {
    @Test func optionSpellingsAllParseTheSame() throws {
        let forms: [[String]] = [
            ["get", "--service=mail", "--account=alice"],
            ["get", "--service", "mail", "--account", "alice"],
            ["get", "-s", "mail", "-a", "alice"],
            ["get", "-smail", "-aalice"],
            ["--socket", "/s", "get", "-s", "mail", "-a", "alice"],
        ]
        for form in forms {
            let parsed = try Parser.parse(form)
            #expect(parsed.verb == "get")
            #expect(parsed.value(.service) == "mail", "\(form)")
            #expect(parsed.value(.account) == "alice", "\(form)")
        }
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try Parser.parse(["help", "--", "--json"])
        #expect(parsed.positionals == ["--json"])
        #expect(!parsed.wantsJSON)
        // A value that starts with a dash is still a value.
        let value = try Parser.parse(["get", "--service", "-weird", "-a", "x"])
        #expect(value.value(.service) == "-weird")
    }

    @Test func socketBeforeOrAfterTheVerb() throws {
        #expect(try Parser.parse(["--socket=/a", "status"]).socket == "/a")
        #expect(try Parser.parse(["status", "--socket", "/b"]).socket == "/b")
        #expect(try Parser.parse(["--socket", "/a", "status", "--socket=/b"]).socket == "/b")
    }

    @Test func usageErrors() {
        let cases: [([String], UsageError)] = [
            (["frobnicate"], UsageError("unknown verb 'frobnicate'")),
            (["--bogus"], UsageError("unknown option '--bogus'")),
            (["--socket"], UsageError("option --socket needs a value")),
            (["get", "--bogus"], UsageError("unknown option '--bogus' for 'get'", verb: "get")),
            (["get", "-z"], UsageError("unknown option '-z' for 'get'", verb: "get")),
            (["get", "-s"], UsageError("option --service needs a value", verb: "get")),
            (["get", "-s", "a", "-s", "b"], UsageError("option --service given twice", verb: "get")),
            (["get", "--internet=yes"], UsageError("option --internet takes no value", verb: "get")),
            (["status", "extra"], UsageError("unexpected argument 'extra'", verb: "status")),
            (["lock", "--json"], UsageError("unknown option '--json' for 'lock'", verb: "lock")),
        ]
        for (arguments, expected) in cases {
            #expect(throws: expected, "\(arguments)") { try Parser.parse(arguments) }
        }
    }

    @Test func validationErrors() throws {
        let cases: [([String], UsageError)] = [
            (["get", "-a", "x"], UsageError("'get' needs --service", verb: "get")),
            (["get", "--internet", "-a", "x"], UsageError("'get' needs --server", verb: "get")),
            (["add", "--server", "h"], UsageError("option --server needs --internet", verb: "add")),
            (["add", "-s", "x", "--port", "80"], UsageError("option --port needs --internet", verb: "add")),
            (
                ["get", "--internet", "--server", "h", "--port", "0"],
                UsageError("invalid port '0': expected 1-65535", verb: "get")
            ),
            (
                ["get", "--internet", "--server", "h", "--port", "70000"],
                UsageError("invalid port '70000': expected 1-65535", verb: "get")
            ),
            (
                ["get", "--internet", "-s", "x"],
                UsageError("option --service is for generic passwords; use --server", verb: "get")
            ),
            (
                ["add", "-s", "x", "--accessible", "always"],
                UsageError("invalid accessibility class 'always' (see arca help add)", verb: "add")
            ),
            (
                ["update", "-s", "x", "--keep-secret"],
                UsageError("'update --keep-secret' needs an attribute to change", verb: "update")
            ),
            (["help", "nope"], UsageError("unknown verb 'nope'", verb: "help")),
            (
                ["find-internet-password", "-s", "h", "-P", "x"],
                UsageError("invalid port 'x': expected 1-65535", verb: "find-internet-password")
            ),
        ]
        for (arguments, expected) in cases {
            #expect(throws: expected, "\(arguments)") { try Validation.validate(try Parser.parse(arguments)) }
        }
    }

    @Test func itemSelectionSplitsKeyFromDescriptiveAttributes() throws {
        let command = try Validation.validate(
            try Parser.parse([
                "update", "-s", "mail", "-a", "alice", "-g", "team", "--synchronizable", "-l", "Mail",
                "--accessible", "after-first-unlock",
            ]))
        guard case .update(let item, let secret) = command else {
            Issue.record("not an update: \(command)")
            return
        }
        #expect(secret == .standardInput)
        #expect(item.itemClass == .genericPassword)
        #expect(
            item.keyAttributes == [
                .service: .string("mail"), .account: .string("alice"), .accessGroup: .string("team"),
                .synchronizable: .bool(true),
            ])
        #expect(item.otherAttributes == [.label: .string("Mail"), .accessible: .accessibility(.afterFirstUnlock)])
        #expect(item.keyringKey?.keyDescription == "arca:genp:mail:alice:g=team:sync")
    }

    @Test func internetKeyringKey() throws {
        let command = try Validation.validate(
            try Parser.parse([
                "get", "--internet", "--server", "example.org", "-a", "bob", "--protocol", "htps", "--port", "8443",
            ]))
        guard case .get(let item, let useKernel, let json) = command else {
            Issue.record("not a get: \(command)")
            return
        }
        #expect(useKernel && !json)
        #expect(item.keyringKey?.keyDescription == "arca:inet:example.org:bob:proto=htps:port=8443")
    }

    @Test func noKernelKeyWithoutAccount() throws {
        guard case .get(let item, _, _) = try Validation.validate(try Parser.parse(["get", "-s", "mail"])) else {
            Issue.record("not a get")
            return
        }
        #expect(item.keyringKey == nil)
    }

    @Test func compatibilityVerbs() throws {
        let add = try Validation.validate(
            try Parser.parse(["add-generic-password", "-a", "alice", "-s", "mail", "-w", "pw", "-U", "-D", "kind"]))
        guard case .add(let item, let secret, let replace, let compatibility) = add else {
            Issue.record("not an add: \(add)")
            return
        }
        #expect(secret == .commandLine("pw") && replace && compatibility)
        #expect(item.otherAttributes == [.description: .string("kind")])
        // -w last, without a value, reads stdin.
        guard
            case .add(_, let fromStdin, false, true) = try Validation.validate(
                try Parser.parse(["add-generic-password", "-s", "mail", "-w"]))
        else {
            Issue.record("-w alone")
            return
        }
        #expect(fromStdin == .standardInput)
        let find = try Validation.validate(try Parser.parse(["find-internet-password", "-s", "h", "-P", "22", "-w"]))
        guard case .compatibilityFind(let inet, true, false) = find else {
            Issue.record("not a find: \(find)")
            return
        }
        #expect(inet.keyAttributes == [.server: .string("h"), .port: .uint32(22)])
        #expect(
            try Validation.validate(try Parser.parse(["unlock-keychain", "-p", "pw"])) == .unlock(.commandLine("pw")))
        #expect(try Validation.validate(try Parser.parse(["lock-keychain", "-a"])) == .lock(all: true))
        #expect(throws: UsageError("unknown option '--w' for 'add-generic-password'", verb: "add-generic-password")) {
            try Parser.parse(["add-generic-password", "--w", "x"])
        }
    }

    @Test func usageErrorGoldenInProcess() {
        let (status, out, err) = runInProcess(["get", "--service"])
        #expect(status == 2)
        #expect(out == "")
        #expect(err == "error: option --service needs a value\nusage: arca get [options]\n")
        let (status2, _, err2) = runInProcess(["nope"])
        #expect(status2 == 2)
        #expect(err2 == "error: unknown verb 'nope'\n" + Parser.globalUsage + "\n")
    }

    @Test func helpGoesToStdoutWithStatusZero() {
        for arguments in [["--help"], ["-h"], [], ["help"]] {
            let (status, out, err) = runInProcess(arguments)
            #expect(status == 0 && err == "", "\(arguments)")
            #expect(out == Help.overview() + "\n", "\(arguments)")
        }
        for verb in CommandTable.verbs {
            for arguments in [["help", verb.name], [verb.name, "--help"], [verb.name, "-h"], ["-h", verb.name]] {
                let (status, out, err) = runInProcess(arguments)
                #expect(status == 0 && err == "", "\(arguments)")
                #expect(out == Help.verb(verb) + "\n", "\(arguments)")
            }
        }
    }

    @Test func versionAndJSONVersion() {
        #expect(runInProcess(["version"]) == (0, "arca \(ArcaVersion.release)\n", ""))
        #expect(runInProcess(["--version"]) == (0, "arca \(ArcaVersion.release)\n", ""))
        #expect(runInProcess(["version", "--json"]) == (0, "{\"version\":\"\(ArcaVersion.release)\"}\n", ""))
    }
}
