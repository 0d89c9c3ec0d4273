import ArcaProtocol
import Testing

@testable import ArcaCLI

/// Each row of the command table runs its own handler. On the old string switch a
/// verb added to the table but missed in the switch fell through to
/// `default: return .delete(…)`; here every row must be listed with the command
/// it gives, so a new row without its expectation fails this test.
@Suite("Command table rows and their handlers (no root needed)")
struct CommandTableTests {
    static let item = ["-s", "mail", "-a", "alice"]
    static let selection = ItemSelection(
        itemClass: .genericPassword, keyAttributes: [.service: .string("mail"), .account: .string("alice")],
        otherAttributes: [:])
    static let internet = ItemSelection(
        itemClass: .internetPassword, keyAttributes: [.server: .string("mail"), .account: .string("alice")],
        otherAttributes: [:])

    /// Every verb, with a command line and the command its handler must give.
    static let expectations: [String: ([String], Command)] = [
        "init": ([], .initVault(showRecoveryKey: true)),
        "add": (item, .add(selection, secret: .standardInput, replaceExisting: false, compatibility: false)),
        "get": (item, .get(selection, useKernel: true, json: false)),
        "find": (item, .find(selection, showSecrets: false, json: false)),
        "update": (item, .update(selection, secret: .standardInput)),
        "delete": (item, .delete(selection, compatibility: false)),
        "list": ([], .find(nil, showSecrets: false, json: false)),
        "clear": ([], .clear),
        "lock": ([], .lock(all: false)),
        "unlock": ([], .unlock(.standardInput)),
        "status": ([], .status(json: false, user: nil)),
        "passwd": ([], .passwd(resync: false, recover: false)),
        "recovery": (["--rotate"], .recovery(rotate: true, json: false)),
        "grant": (item + ["--allow-user", "0"], .grant(selection, principals: [.user(0)], revoke: false)),
        "revoke": (item, .grant(selection, principals: [], revoke: true)),
        "grants": (["--json"], .grants(json: true)),
        "show": ([], .show(json: false)),
        "version": ([], .version(json: false)),
        "help": (["get"], .help(verb: "get")),
        "fleet": (["hosts"], .action(VerbAction(verb: "fleet", arguments: ["hosts"]) { _, _ in })),
        "export": (["--to", "f"], .action(VerbAction(verb: "export", arguments: ["f"]) { _, _ in })),
        "import": (["--from", "f"], .action(VerbAction(verb: "import", arguments: ["f"]) { _, _ in })),
        "sync": (["init"], .action(VerbAction(verb: "sync", arguments: ["init"]) { _, _ in })),
        "resolve": (
            [String(repeating: "ab", count: 16), "0123ABCD"],
            .action(
                VerbAction(verb: "resolve", arguments: [String(repeating: "ab", count: 16), "0123abcd"]) { _, _ in })
        ),
        "add-generic-password": (
            item + ["-w", "pw"],
            .add(selection, secret: .commandLine("pw"), replaceExisting: false, compatibility: true)
        ),
        "find-generic-password": (item, .compatibilityFind(selection, passwordOnly: false, passwordOnStderr: false)),
        "delete-generic-password": (item, .delete(selection, compatibility: true)),
        "add-internet-password": (
            item, .add(internet, secret: .standardInput, replaceExisting: false, compatibility: true)
        ),
        "find-internet-password": (
            item + ["-w"], .compatibilityFind(internet, passwordOnly: true, passwordOnStderr: false)
        ),
        "delete-internet-password": (item, .delete(internet, compatibility: true)),
        "lock-keychain": (["-a"], .lock(all: true)),
        "unlock-keychain": ([], .unlock(.standardInput)),
    ]

    @Test("every row's handler gives its own verb's command", arguments: CommandTable.verbs.map(\.name))
    func rowsRunTheirOwnHandler(verb: String) throws {
        let (arguments, expected) = try #require(Self.expectations[verb], "no expectation for verb '\(verb)'")
        #expect(try Validation.validate(try Parser.parse([verb] + arguments)) == expected)
    }

    @Test("import: --from secret-service is handed over; its options are refused with a backup file")
    func importSources() {
        func validate(_ words: [String]) -> UsageError? {
            do { _ = try Validation.validate(try Parser.parse(["import"] + words)) } catch { return error }
            return nil
        }
        #expect(
            validate(["--from", "secret-service"])
                == UsageError(
                    "'import --from secret-service' runs arca-secretd --import; see arca-secretd(1)", verb: "import"))
        #expect(
            validate(["--from", "/tmp/b", "--dry-run"])
                == UsageError(
                    "--dry-run is for 'import --from secret-service', not a backup file", verb: "import"))
        #expect(
            validate(["--from", "/tmp/b", "--json"])
                == UsageError(
                    "--json is for 'import --from secret-service', not a backup file", verb: "import"))
    }

    @Test("the table lists each verb once, and only the verbs expected here")
    func tableMatchesExpectations() {
        let names = CommandTable.verbs.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Set(names) == Set(Self.expectations.keys))
    }

    @Test("an option key is one option per verb: no row declares a key or a spelling twice")
    func optionsAreUniquePerVerb() {
        for verb in CommandTable.verbs {
            let options = verb.allOptions
            #expect(Set(options.map(\.key)).count == options.count, "\(verb.name)")
            let shorts = options.compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(verb.name)")
        }
    }

    @Test("a verb's own run function travels in its command (a verb defined in its own file)")
    func verbActionRuns() {
        let action = VerbAction(verb: "probe", arguments: ["x"]) { _, output throws(CLIError) in
            output.line("probe ran")
        }
        #expect(Command.action(action) == .action(VerbAction(verb: "probe", arguments: ["x"]) { _, _ in }))
        #expect(Command.action(action) != .action(VerbAction(verb: "probe", arguments: ["y"]) { _, _ in }))
        var context = Context(socketPath: "/nonexistent", uid: 0, input: SecretInput())
        var output = Output()
        #expect(throws: Never.self) { try context.execute(.action(action), output: &output) }
        #expect(String(decoding: output.standardOutput, as: UTF8.self) == "probe ran\n")
    }
}
