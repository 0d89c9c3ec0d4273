import ArcaProtocol
import Testing

@testable import ArcaSecretService

/// The import's report (text and JSON, exact) and the lock rule it shares with the service.
@Suite struct SecretImportTests {
    @Test func summaryAsTextAndJSON() {
        var summary = SecretImport.Summary(collection: "/org/freedesktop/secrets/collection/login", dryRun: false)
        summary.record("/a/1", .imported)
        summary.record("/a/2", .skipped)
        summary.record("/a/3", .imported)
        summary.record("/a/4", .failed(label: "Wi\"fi\n✓", reason: "the provider keeps it locked"))
        #expect(summary.imported == 2 && summary.skipped == 1)
        #expect(
            summary.json == """
                {"collection":"/org/freedesktop/secrets/collection/login","dry_run":false,"imported":2,"skipped":1,\
                "failed":[{"path":"/a/4","label":"Wi\\"fi\\n✓","reason":"the provider keeps it locked"}]}
                """)
        #expect(
            summary.text == """
                imported 2, skipped 1 already present, failed 1 (from /org/freedesktop/secrets/collection/login)
                failed: /a/4 "Wi\\"fi\\n✓": the provider keeps it locked
                """)
        let dry = SecretImport.Summary(collection: "/c", dryRun: true)
        #expect(dry.json == #"{"collection":"/c","dry_run":true,"imported":0,"skipped":0,"failed":[]}"#)
        #expect(dry.text == "would import 0, skipped 0 already present, failed 0 (from /c)")
    }

    @Test func jsonEscapesControlCharacters() {
        #expect(JSONText.quote("a\u{1}b\\c\td") == #""a\u0001b\\c\td""#)
    }

    @Test func lockedWhenTheClassOfNewItemsIsLocked() {
        let afu = CollectionSettings(label: "Login", accessible: .afterFirstUnlock)
        let wu = CollectionSettings(label: "Login", accessible: .whenUnlocked)
        #expect(afu.isLocked(unlocked: []) && wu.isLocked(unlocked: []))
        #expect(!afu.isLocked(unlocked: [.afterFirstUnlock]) && wu.isLocked(unlocked: [.afterFirstUnlock]))
        #expect(!wu.isLocked(unlocked: [.whenUnlocked]))
    }
}
