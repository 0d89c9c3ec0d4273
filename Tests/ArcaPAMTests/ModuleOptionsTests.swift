import Testing

@testable import ArcaPAM

@Suite struct ModuleOptionsTests {
    @Test func defaults() {
        let (options, rejected) = ModuleOptions.parse([])
        #expect(options == ModuleOptions())
        #expect(options.socketPath == "/run/arca/arcad.sock")
        #expect(options.timeoutMilliseconds == 3_000)
        #expect(options.autoEnroll && !options.unlockInAuth && !options.debug && !options.quiet)
        #expect(options.onlyIf == nil)
        #expect(rejected.isEmpty)
    }

    @Test func everyArgument() {
        let (options, rejected) = ModuleOptions.parse([
            "debug", "quiet", "socket=/tmp/a.sock", "no_auto_enroll", "unlock_in_auth", "only_if=sshd,login",
            "timeout=250",
        ])
        #expect(rejected == [])
        #expect(options.debug && options.quiet && options.unlockInAuth && !options.autoEnroll)
        #expect(options.socketPath == "/tmp/a.sock")
        #expect(options.onlyIf == ["sshd", "login"])
        #expect(options.timeoutMilliseconds == 250)
        #expect(options.applies(to: "sshd") && options.applies(to: "login"))
        #expect(!options.applies(to: "su") && !options.applies(to: nil))
    }

    @Test func lastOfAutoEnrollWins() {
        #expect(ModuleOptions.parse(["no_auto_enroll", "auto_enroll"]).options.autoEnroll)
    }

    @Test(arguments: [
        "bogus", "debug=1", "socket=relative.sock", "socket=", "timeout=0", "timeout=60001", "timeout=abc",
        "only_if=", "use_first_pass",
    ])
    func unknownOrMalformedIsRejectedNotFatal(argument: String) {
        let (options, rejected) = ModuleOptions.parse(["debug", argument])
        #expect(rejected == [argument])
        #expect(options.debug)
        #expect(options.timeoutMilliseconds == 3_000)
        #expect(options.socketPath == "/run/arca/arcad.sock")
    }

    /// The PAM entry applies `argv` one argument at a time.
    @Test func applyOneByOne() {
        var options = ModuleOptions()
        let accepted = [
            options.apply("timeout=250"), options.apply("timeout=0"), options.apply("socket=relative.sock"),
            options.apply("only_if=sshd"),
        ]
        #expect(accepted == [true, false, false, true])
        #expect(options.timeoutMilliseconds == 250)
        #expect(options.socketPath == "/run/arca/arcad.sock")
        #expect(options.onlyIf == ["sshd"])
    }
}
