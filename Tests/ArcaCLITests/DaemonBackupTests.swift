import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `arca export` / `arca import` through the real binary against a real arcad, as the vault's owner.
    @Suite struct Backup {
        static let item = ["-s", "mail", "-a", "alice"]
        static let passphrase = "a long backup passphrase\n"

        /// The owner's own directory: the CLI writes the backup as the user, never arcad.
        static func ownersHome(_ arcad: TestArcad) throws -> String {
            let home = arcad.directory + "/home"
            try FileManager.default.createDirectory(
                atPath: home, withIntermediateDirectories: false,
                attributes: [
                    .posixPermissions: 0o700, .ownerAccountID: arcad.owner.uid, .groupOwnerAccountID: arcad.owner.gid,
                ])
            return home
        }

        @Test func exportThenImportThroughTheBinary() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let home = try Self.ownersHome(arcad)
            let file = home + "/arca.backup"
            try check(
                [
                    Step(arguments: ["init", "--no-recovery-key"], stdin: "pw\n"),
                    Step(arguments: ["add"] + Self.item, stdin: "hunter2"),
                    Step(
                        arguments: ["export"], status: 2,
                        stderr: "error: 'export' needs --to FILE\nusage: arca export [options]\n"),
                    Step(
                        arguments: ["export", "--to", file, "--passphrase"], stdin: Self.passphrase,
                        stdout: "exported to \(file)\n"),
                    Step(
                        arguments: ["export", "--to", file, "--passphrase"], stdin: Self.passphrase, status: 1,
                        stderr: "arca: export: \(file): File exists\n"),
                    Step(arguments: ["delete"] + Self.item),
                    Step(
                        arguments: ["import", "--from", file], stdin: "not the passphrase\n", status: 1,
                        stderr: "arca: import: wrong password\n"),
                    Step(
                        arguments: ["import", "--from", file], stdin: Self.passphrase,
                        stdout: "added 1, replaced 0, unchanged 0\n"),
                    Step(arguments: ["get"] + Self.item, stdout: "hunter2"),
                    Step(
                        arguments: ["import", "--from", file], stdin: Self.passphrase,
                        stdout: "added 0, replaced 0, unchanged 1\n"),
                    Step(
                        arguments: ["import", "--from", home + "/missing"], status: 1,
                        stderr: "arca: import: \(home)/missing: No such file or directory\n"),
                ], uid: arcad.owner.uid
            ) { try arcad.arca($0, stdin: $1) }
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            #expect((attributes[.ownerAccountID] as? Int).map(UInt32.init) == arcad.owner.uid)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.range(of: Data("hunter2".utf8)) == nil)
            #expect(bytes.range(of: Data("mail".utf8)) == nil)
        }

        /// A mistyped recovery key used to seal a backup that the real key never opens.
        @Test func exportRefusesARecoveryKeyThatIsNotTheVaults() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let home = try Self.ownersHome(arcad)
            let file = home + "/arca.backup"
            let made = try arcad.arca(["init"], stdin: "pw\n")
            #expect(made.status == 0)
            let first = try #require(made.stdout.split(separator: "\n").last.map(String.init))
            let rotated = try arcad.arca(["recovery", "--rotate"], stdin: "pw\n")
            let current = try #require(rotated.stdout.split(separator: "\n").last.map(String.init))
            #expect(first != current)
            try check(
                [
                    Step(arguments: ["add"] + Self.item, stdin: "hunter2"),
                    Step(
                        arguments: ["export", "--to", file], stdin: first + "\n", status: 1,
                        stderr: "arca: export: wrong recovery key: it does not open this vault\n"),
                    Step(arguments: ["export", "--to", file], stdin: current + "\n", stdout: "exported to \(file)\n"),
                ], uid: arcad.owner.uid
            ) { try arcad.arca($0, stdin: $1) }
            // The refused export wrote nothing: the file is the one the right key made, and opens with it.
            #expect(try arcad.arca(["delete"] + Self.item).status == 0)
            let imported = try arcad.arca(["import", "--from", file], stdin: current + "\n")
            #expect(imported.stdout == "added 1, replaced 0, unchanged 0\n", "\(imported)")
        }
    }
}
