import Foundation
import Testing

@testable import ArcaCLI

/// The man page and `--help` must mention every verb and flag of the command table.
@Suite struct ManPageTests {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func manPage() throws -> String {
        try String(contentsOf: packageDirectory.appendingPathComponent("man/arca.1"), encoding: .utf8)
    }

    /// The text of a section, from `.SH NAME` to the next `.SH`.
    static func section(_ name: String, of page: String) -> String {
        guard let start = page.range(of: ".SH \(name)\n") else { return "" }
        let rest = page[start.upperBound...]
        let end = rest.range(of: "\n.SH ")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    @Test func synopsisIsGeneratedFromTheTable() throws {
        let synopsis = Self.section("SYNOPSIS", of: try Self.manPage())
        let expected = Help.manSynopsis()
        if synopsis != expected {
            try? expected.write(toFile: "/tmp/arca.1.synopsis", atomically: true, encoding: .utf8)
        }
        #expect(synopsis == expected, "man/arca.1 SYNOPSIS is stale; the table's is in /tmp/arca.1.synopsis")
    }

    @Test func everyVerbAndFlagIsInTheManPage() throws {
        let page = try Self.manPage()
        let body = page.replacingOccurrences(of: Self.section("SYNOPSIS", of: page), with: "")
        for verb in CommandTable.verbs {
            #expect(body.contains(".B " + Help.roff(verb.name)), "verb \(verb.name) has no paragraph in arca(1)")
            for option in verb.allOptions {
                if option.hasLongForm {
                    #expect(body.contains("\\-\\-" + Help.roff(option.name)), "--\(option.name) (\(verb.name))")
                }
                if let short = option.short {
                    #expect(body.contains("\\-\(short)"), "-\(short) (\(verb.name))")
                }
            }
        }
        for code in ExitCode.allCases {
            #expect(Self.section("EXIT STATUS", of: page).contains(".B \(code.rawValue)\n"), "exit \(code.rawValue)")
        }
    }

    @Test func everyVerbAndFlagIsInHelp() {
        let overview = Help.overview()
        for verb in CommandTable.verbs {
            #expect(overview.contains("  \(verb.name)  "), "verb \(verb.name) missing from --help")
            let help = Help.verb(verb)
            for option in verb.allOptions {
                #expect(help.contains(option.spelling + " "), "\(option.spelling) missing from help \(verb.name)")
            }
        }
    }
}
