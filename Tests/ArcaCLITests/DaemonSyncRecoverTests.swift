import ArcaClient
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaCLI

extension CLIAgainstArcadBinaryTests {
    /// `arca sync recover` through the real binaries (arca hands over to arca-sync): machine A
    /// is lost; a fresh machine B with a copy of A's synced folder and A's printed recovery key
    /// takes the circle over and has A's synchronizable item. Syncthing is not needed for it.
    @Suite struct SyncRecover {
        static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

        /// Writes `bytes` at `path` (directories made), owned by `uid`.
        static func write(_ bytes: [UInt8], _ path: String, uid: UInt32) throws {
            let directory = (path as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            chown(path, uid, gid_t(uid))
        }

        @Test func aFreshMachineRecoversTheCircleWithTheRecoveryKey() throws {
            let a = try TestArcad()
            defer { a.stop() }
            let b = try TestArcad()
            defer { b.stop() }
            #expect(try a.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0)
            // B's own recovery key: well formed, and not the one A's seal is sealed to.
            let wrongKey = String(try #require(try b.arca(["init"], stdin: "pw\n").stdout.split(separator: "\n").last))
            #expect(try a.arca(["sync", "init"]).status == 0)
            let rotated = try a.arca(["recovery", "--rotate"], stdin: "pw\n")
            #expect(rotated.status == 0)
            let key = String(try #require(rotated.stdout.split(separator: "\n").last))
            let item = ["-s", "mesh17-recovered", "-a", "me", "--synchronizable"]
            #expect(try a.arca(["add"] + item, stdin: "from-a\n").status == 0)

            // A copy of A's synced folder, laid out as its agent writes it, owned by B's user.
            let outbox = try ArcadClient(path: a.socket).syncPull(uid: a.owner.uid, after: 0)
            #expect(outbox.approvals.count == 1)
            let folder = "/tmp/mesh17-recover-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let uid = b.owner.uid
            let dev = folder + "/" + Self.hex(outbox.device)
            for record in outbox.records {
                let name = String(repeating: "0", count: 20 - String(record.seq).count) + String(record.seq) + ".rec"
                try Self.write(record.bytes, dev + "/records/" + name, uid: uid)
            }
            try Self.write(outbox.head, dev + "/head", uid: uid)
            for approval in outbox.approvals {
                try Self.write(approval.bytes, dev + "/approvals/" + Self.hex(approval.device), uid: uid)
            }
            // Syncthing's config.xml (its REST API is not running: recover does not need it).
            try Self.write(
                Array(
                    "<configuration><gui><address>127.0.0.1:1</address><apikey>k</apikey></gui></configuration>".utf8),
                folder + "-st/config.xml", uid: uid)
            defer { try? FileManager.default.removeItem(atPath: folder + "-st") }
            for path in [folder, dev, dev + "/records", dev + "/approvals", folder + "-st"] {
                chown(path, uid, gid_t(uid))
            }
            let recover = ["sync", "recover", "--folder", folder, "--syncthing-home", folder + "-st"]

            let wrong = try b.arca(recover, stdin: wrongKey + "\n")
            #expect(wrong.status == 6)
            #expect(
                wrong.stderr
                    == "arca sync: wrong recovery key: it opens no recovery seal in \(folder); nothing changed\n")
            #expect(try b.arca(["get"] + item).status == 44)
            #expect(try ArcadClient(path: b.socket).syncStatusOrNil(uid: uid) == nil)

            let right = try b.arca(recover, stdin: key + "\n")
            #expect(right.status == 0, "\(right)")
            let lines = right.stdout.split(separator: "\n").map(String.init)
            let device = try ArcadClient(path: b.socket).syncStatus(uid: uid).device
            #expect(
                lines.first == "recovered the circle: this device \(Self.hex(device)) (Syncthing is not reachable now)")
            #expect(
                lines.dropFirst().first
                    == "\(outbox.records.count + 1) file(s) of the old devices verified and applied; 1 old device(s) removed; epoch 1"
            )
            #expect(try b.arca(["get"] + item) == Run(status: 0, stdout: "from-a", stderr: ""))
            #expect(try b.arca(recover, stdin: key + "\n").status == 4)
        }
    }
}

extension ArcadClient {
    /// The sync status, or nil when sync is not set up for `uid` here.
    fileprivate func syncStatusOrNil(uid: UInt32) throws -> SyncStatus? {
        do { return try syncStatus(uid: uid) } catch {
            if case .refused(.itemNotFound, _) = error { return nil }
            throw error
        }
    }
}
