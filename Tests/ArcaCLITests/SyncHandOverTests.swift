import Testing

@testable import ArcaCLI

/// `arca sync VERB` hands over to arca-sync for every verb but init, which stays in arca.
@Suite struct SyncHandOverTests {
    @Test func onlyTheAgentsVerbsHandOver() {
        for verb in ["join", "approve", "remove", "status", "run", "recover"] {
            #expect(HandOver.matching(["sync", verb, "x"])?.handOver.program == "arca-sync", "\(verb)")
        }
        #expect(HandOver.matching(["sync", "init"]) == nil)
        #expect(HandOver.matching(["sync"]) == nil)
        #expect(HandOver.matching(["sync", "--json", "status"]) == nil)
        #expect(HandOver.matching(["status"]) == nil)
    }

    @Test func aSocketBeforeTheVerbGoesToTheAgent() {
        #expect(
            HandOver.matching(["--socket", "/tmp/a.sock", "sync", "status", "--json"])?.arguments
                == ["--socket", "/tmp/a.sock", "status", "--json"])
        #expect(
            HandOver.matching(["--socket=/tmp/a.sock", "sync", "run"])?.arguments == ["--socket", "/tmp/a.sock", "run"])
        #expect(HandOver.matching(["--socket", "/tmp/a.sock", "sync", "init"]) == nil)
    }

    @Test func theBinaryExecsArcaSyncBesideIt() throws {
        let run = try arca(["sync", "status", "--bogus"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("arca sync: unknown option --bogus\nusage: arca sync VERB [options]"))
    }

    @Test func inProcessNothingIsExeced() {
        var output = Output(standardOutputIsTerminal: false)
        #expect(CLI.run(["sync", "run"], output: &output) == 2)
        #expect(
            String(decoding: output.standardError, as: UTF8.self).hasPrefix(
                "error: 'sync run' runs arca-sync; see arca-sync(1)\n"))
        output = Output(standardOutputIsTerminal: false)
        #expect(CLI.run(["sync", "frob"], output: &output) == 2)
        #expect(
            String(decoding: output.standardError, as: UTF8.self).hasPrefix(
                "error: 'sync' needs init, join, approve, remove, status, run or recover\n"))
    }
}
