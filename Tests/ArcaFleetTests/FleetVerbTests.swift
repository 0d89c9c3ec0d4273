import Foundation
import Testing

@testable import ArcaFleet

/// The verb table (FleetVerb.all) and what FleetCLI.execute refuses before it reads fleet.conf.
@Suite("Fleet verbs: rows carry their flags; refusals come before fleet.conf is read")
struct FleetVerbTests {
    /// A fleet.conf path that cannot be read (a directory), and one whose text is garbage.
    private static func badConfigs() throws -> (directory: String, garbage: String, cleanup: () -> Void) {
        let directory = "/tmp/arca-fleet-verb-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let garbage = directory + "/fleet.conf"
        try Data("\u{1}\u{2} not = a fleet.conf\n".utf8).write(to: URL(fileURLWithPath: garbage))
        return (directory, garbage, { try? FileManager.default.removeItem(atPath: directory) })
    }

    @Test("a flag the verb's row does not list is a usage error before fleet.conf is read")
    func flagRefusedBeforeConfig() throws {
        let missing = "/nonexistent/arca-fleet/fleet.conf"
        #expect(throws: FleetError.usage("hosts does not take --local")) {
            try FleetCLI.execute(["--conf", missing, "hosts", "--local"])
        }
        #expect(throws: FleetError.usage("run does not take --json")) {
            try FleetCLI.execute(["--conf", missing, "run", "--json"])
        }
        #expect(throws: FleetError.usage("approve does not take --json")) {
            try FleetCLI.execute(["--conf", missing, "approve", "h1", "--group", "web", "--local", "--json"])
        }
        // The flags a row lists pass, and the verb goes on to read fleet.conf.
        #expect(throws: FleetError.usage("cannot read \(missing)")) {
            try FleetCLI.execute(["--conf", missing, "status", "--json", "--local"])
        }
        #expect(throws: FleetError.usage("cannot read \(missing)")) {
            try FleetCLI.execute(["--conf", missing, "hosts", "--json"])
        }
    }

    @Test("an unknown verb is refused, naming it, before fleet.conf is read (unreadable or garbage)")
    func unknownVerbBeforeConfig() throws {
        let (directory, garbage, cleanup) = try Self.badConfigs()
        defer { cleanup() }
        for conf in [directory, garbage] {
            #expect(throws: FleetError.usage("unknown verb frobnicate")) {
                try FleetCLI.execute(["--conf", conf, "frobnicate"])
            }
            #expect(throws: FleetError.usage("unknown verb frobnicate")) {
                try FleetCLI.execute(["--conf", conf, "frobnicate", "--json"])
            }
        }
        // The same fleet.conf paths do fail a known verb: they are really bad.
        #expect(throws: FleetError.usage("cannot read \(directory)")) {
            try FleetCLI.execute(["--conf", directory, "refresh"])
        }
        #expect(throws: FleetError.usage("fleet.conf line 1: not a known `key = value`")) {
            try FleetCLI.execute(["--conf", garbage, "refresh"])
        }
    }

    @Test("every row's flags are flags the parser knows, and the usage line of the verb shows exactly them")
    func rowsMatchUsage() {
        let lines = FleetCLI.usage.split(separator: "\n").map(String.init)
        let optional = FleetOptions.flagNames.subtracting(["help"])
        #expect(optional == ["json", "local"])
        for verb in FleetVerb.all where verb.name != "help" {
            #expect(verb.flags.isSubset(of: optional), "\(verb.name)")
            let line = lines.first { $0.hasPrefix("  \(verb.name) ") }
            #expect(line != nil, "\(verb.name) is in the usage text")
            for flag in optional {
                #expect((line ?? "").contains("[--\(flag)]") == verb.flags.contains(flag), "\(verb.name) --\(flag)")
            }
        }
        // The verbs the usage text lists (lines indented by two), in the table's order.
        let listed = lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }.compactMap { line in
            line.split(separator: " ").first.map(String.init)
        }
        #expect(FleetVerb.all.map(\.name).filter { $0 != "help" } == listed)
        #expect(Set(FleetVerb.all.map(\.name)).count == FleetVerb.all.count)
    }

    @Test("a valued option the verb's row does not list is a usage error before fleet.conf is read")
    func valueRefusedBeforeConfig() throws {
        let (directory, _, cleanup) = try Self.badConfigs()
        defer { cleanup() }
        #expect(throws: FleetError.usage("hosts does not take --group")) {
            try FleetCLI.execute(["--conf", directory, "hosts", "--group", "web"])
        }
        #expect(throws: FleetError.usage("revoke does not take --allow-user")) {
            try FleetCLI.execute(["--conf", directory, "revoke", "-s", "s", "-a", "a", "--allow-user", "bob"])
        }
        // The options a row lists pass, and the verb goes on to read fleet.conf.
        #expect(throws: FleetError.usage("cannot read \(directory)")) {
            try FleetCLI.execute(["--conf", directory, "approve", "h1", "--group", "web"])
        }
        for verb in FleetVerb.all {
            #expect(verb.values.isSubset(of: FleetOptions.valued.subtracting(["conf"])), "\(verb.name)")
        }
    }

    @Test("help takes nothing: an argument, a flag or an option is a usage error (exit 2), as for other verbs")
    func helpTakesNothing() throws {
        #expect(throws: FleetError.usage("help takes no arguments")) { try FleetCLI.execute(["help", "extra"]) }
        #expect(throws: FleetError.usage("help does not take --host")) {
            try FleetCLI.execute(["help", "--host", "x"])
        }
        #expect(throws: FleetError.usage("help does not take --json")) { try FleetCLI.execute(["help", "--json"]) }
        #expect(FleetCLI.main(["help", "extra"]) == 2)
    }
}
