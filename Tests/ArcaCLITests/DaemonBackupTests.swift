import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
/// `arca export` / `arca import` through the real binary against a real arcad, as the vault's owner.
@Suite struct Backup {
    static let item = ["-s", "mail", "-a", "alice"]
    static let passphrase = "a long backup passphrase\n"

    @Test func exportThenImportThroughTheBinary() throws {
        let arcad = try TestArcad()
        defer { arcad.stop() }
        // The owner's own directory: the CLI writes the file as the user, never arcad.
        let home = arcad.directory + "/home"
        try FileManager.default.createDirectory(
            atPath: home, withIntermediateDirectories: false,
            attributes: [
                .posixPermissions: 0o700, .ownerAccountID: arcad.owner.uid, .groupOwnerAccountID: arcad.owner.gid,
            ])
        let file = home + "/arca.backup"
        try check(
            [
                Step(arguments: ["init", "--no-recovery-key"], stdin: "pw\n"),
                Step(arguments: ["add"] + Self.item, stdin: "hunter2"),
                Step(
                    arguments: ["export"], status: 2,
                    stderr: "error: 'export' needs --to FILE\nusage: arca export [options]\n"),
                Step(arguments: ["export", "--to", file, "--passphrase"], stdin: Self.passphrase,
                     stdout: "exported to \(file)\n"),
                Step(arguments: ["export", "--to", file, "--passphrase"], stdin: Self.passphrase, status: 1,
                     stderr: "arca: export: \(file): File exists\n"),
                Step(arguments: ["delete"] + Self.item),
                Step(arguments: ["import", "--from", file], stdin: "not the passphrase\n", status: 1,
                     stderr: "arca: import: wrong password\n"),
                Step(arguments: ["import", "--from", file], stdin: Self.passphrase,
                     stdout: "added 1, replaced 0, unchanged 0\n"),
                Step(arguments: ["get"] + Self.item, stdout: "hunter2"),
                Step(arguments: ["import", "--from", file], stdin: Self.passphrase,
                     stdout: "added 0, replaced 0, unchanged 1\n"),
                Step(arguments: ["import", "--from", home + "/missing"], status: 1,
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
}
}
