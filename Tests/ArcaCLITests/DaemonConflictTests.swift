import ArcaClient
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `arca find --conflicts` and `arca resolve` through the real binaries: two arcads (two
    /// machines, a throwaway owner each), files carried between them with the agent's calls
    /// (ArcadClient as root), a concurrent edit and delete, the conflict resolved from the CLI.
    @Suite struct Conflicts {
        func client(_ arcad: TestArcad) throws -> ArcadClient { try ArcadClient(path: arcad.socket) }

        /// What the agent does: pull from one, push the files to the other.
        func carry(_ from: TestArcad, _ to: TestArcad, toDevice: [UInt8]) throws -> [SyncFileOutcome] {
            let outbox = try client(from).syncPull(uid: from.owner.uid, after: 0)
            var files = outbox.approvals.filter { $0.device == toDevice }.map {
                SyncFile(kind: .approval, author: outbox.device, bytes: $0.bytes)
            }
            files += outbox.records.map { SyncFile(kind: .record, author: outbox.device, bytes: $0.bytes) }
            files.append(SyncFile(kind: .head, author: outbox.device, bytes: outbox.head))
            return try client(to).syncPush(uid: to.owner.uid, files: files)
        }

        @Test func concurrentEditAndDeleteIsListedAndResolvedFromTheCLI() throws {
            let a = try TestArcad()
            defer { a.stop() }
            let b = try TestArcad()
            defer { b.stop() }
            for m in [a, b] { #expect(try m.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0) }
            #expect(try b.arca(["find", "--conflicts"]).status == 44)
            #expect(try a.arca(["sync", "init"]).status == 0)
            let idA = try client(a).syncStatus(uid: a.owner.uid).device
            let idB = try client(b).syncJoin(uid: b.owner.uid, approver: idA)
            let sas = try client(a).syncApprovalString(uid: a.owner.uid, device: idB)
            #expect(try client(a).syncApprove(uid: a.owner.uid, device: idB, shortAuthenticationString: sas).count > 0)
            _ = try carry(a, b, toDevice: idB)
            #expect(try b.arca(["find", "--conflicts"]) == Run(status: 0, stdout: "", stderr: ""))
            let item = ["-s", "shared", "-a", "me", "--synchronizable"]
            #expect(try a.arca(["add"] + item, stdin: "v1\n").status == 0)
            _ = try carry(a, b, toDevice: idB)
            // Read from B's kernel keyring (get tries the kernel first).
            #expect(try b.arca(["get"] + item) == Run(status: 0, stdout: "v1", stderr: ""))
            // A edits, then B deletes, neither having seen the other.
            #expect(try a.arca(["update"] + item, stdin: "v2\n").status == 0)
            usleep(5_000)
            #expect(try b.arca(["delete"] + item).status == 0)
            _ = try carry(a, b, toDevice: idB)
            _ = try carry(b, a, toDevice: idA)
            #expect(try a.arca(["get"] + item).status == 44)
            let listed = try b.arca(["find", "--conflicts"])
            #expect(listed.status == 0 && listed.stderr == "")
            let lines = listed.stdout.split(separator: "\n").map(String.init)
            let versions = lines.filter { $0.hasPrefix("version: ") }
            #expect(lines.first?.hasPrefix("item: ") == true && versions.count == 2)
            #expect(versions.first?.contains(" winner (deleted) ") == true)
            #expect(versions.last?.contains(" sibling ") == true && lines.contains("  service: shared"))
            #expect(!listed.stdout.contains("v2"))
            let itemHex = String(lines[0].dropFirst("item: ".count))
            let sibling = String(try #require(versions.last).dropFirst("version: ".count).prefix(16))
            let resolved = try b.arca(["resolve", itemHex, sibling])
            #expect(resolved == Run(status: 0, stdout: "kept version \(sibling) of item \(itemHex)\n", stderr: ""))
            #expect(try b.arca(["get"] + item).stdout == "v2")
            _ = try carry(b, a, toDevice: idA)
            #expect(try a.arca(["get"] + item).stdout == "v2")
            #expect(try a.arca(["find", "--conflicts"]).stdout == "")
            #expect(try b.arca(["resolve", itemHex, sibling]).status == 44)
            #expect(try b.arca(["resolve", "xyz", sibling]).status == 2)
        }
    }
}
