import Foundation
import Testing

@testable import ArcaSyncAgent

/// arca-sync(1) documents every verb (SYNOPSIS and VERBS), `--help` lists it, and EXIT STATUS
/// lists every exit code `SyncAgentError` maps to.
struct SyncManPageTests {
    static let page: String = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return (try? String(contentsOf: root.appendingPathComponent("man/arca-sync.1"), encoding: .utf8)) ?? ""
    }()

    static func section(_ name: String) -> String {
        guard let start = page.range(of: ".SH \(name)\n") else { return "" }
        let rest = page[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n.SH ")?.lowerBound ?? rest.endIndex)])
    }

    @Test func everyVerbIsInTheSynopsisTheVerbsAndTheUsage() {
        #expect(SyncVerb.all.map(\.name).sorted() == ["approve", "join", "recover", "remove", "run", "status"])
        for verb in SyncVerb.all.map(\.name) {
            #expect(Self.section("SYNOPSIS").contains(".B arca sync \(verb)"), "\(verb)")
            #expect(Self.section("VERBS").contains(".B \(verb)"), "\(verb)")
            #expect(SyncCLI.usage.contains("\n  \(verb)"), "\(verb)")
        }
    }

    @Test func everyExitCodeIsDocumented() {
        let errors: [SyncAgentError] = [.usage(""), .syncthing(""), .arcad(""), .folder(""), .notConfirmed("")]
        for code in [0] + errors.map(\.exitCode) {
            #expect(Self.section("EXIT STATUS").contains(".B \(code)\n"), "\(code)")
        }
    }
}
