import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `--synchronizable` with a `-this-device-only` class: errSecParam from arcad,
    /// exit 1 (arca(1), EXIT STATUS), and nothing stored or changed.
    @Suite struct Synchronizable {
        @Test func synchronizableThisDeviceOnlyIsAnInvalidParameter() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0)
            let why = "invalid parameter (a synchronizable item cannot have a ThisDeviceOnly accessibility)"
            let added = try arcad.arca(
                [
                    "add", "-s", "mail", "-a", "alice", "--synchronizable", "--accessible",
                    "after-first-unlock-this-device-only",
                ], stdin: "hunter2")
            #expect(added.status == 1)
            #expect(added.stderr == "arca: add: \(why)\n")
            #expect(try arcad.arca(["get", "-s", "mail", "-a", "alice", "--synchronizable"]).status == 44)

            #expect(
                try arcad.arca(["add", "-s", "mail", "-a", "alice", "--synchronizable"], stdin: "hunter2").status == 0)
            let updated = try arcad.arca(
                [
                    "update", "-s", "mail", "-a", "alice", "--synchronizable", "--keep-secret", "--accessible",
                    "when-unlocked-this-device-only",
                ])
            #expect(updated.status == 1)
            #expect(updated.stderr == "arca: update: \(why)\n")
            let found = try arcad.arca(["find", "-s", "mail", "--synchronizable", "--json"]).stdout
            let items = try #require(try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items.first?["accessible"] as? String == "when-unlocked")
            #expect(items.first?["synchronizable"] as? Bool == true)
        }
    }
}
