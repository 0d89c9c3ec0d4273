import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `arca sync init` through the real binary against a real arcad, as the vault's owner.
    @Suite struct Sync {
        @Test func syncInitShowsTheDeviceIdOnceAndNeverReplacesIt() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            #expect(try arcad.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0)
            let made = try arcad.arca(["sync", "init"])
            #expect(made.status == 0, "\(made)")
            let prefix = "sync circle created on this machine; device id "
            #expect(made.stdout.hasPrefix(prefix) && made.stdout.hasSuffix("\n"))
            let id = made.stdout.dropFirst(prefix.count).dropLast()
            #expect(id.count == 64 && id.allSatisfy { "0123456789abcdef".contains($0) })
            let file = arcad.directory + "/state/sync/\(arcad.owner.uid).identity"
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect((attributes[.ownerAccountID] as? Int) == 0)
            try check(
                [
                    Step(
                        arguments: ["sync", "init"], status: 45,
                        stderr: "arca: sync init: sync is already set up for this user on this machine\n"),
                    Step(
                        arguments: ["sync"], status: 2,
                        stderr:
                            "error: 'sync' needs init, join, approve, remove, status, run or recover\n"
                            + "usage: arca sync [options] init|join|approve|remove|status|run|recover [ARGS...]\n"
                    ),
                ], uid: arcad.owner.uid
            ) { try arcad.arca($0, stdin: $1) }
        }
    }
}
