import ArcaClient
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Testing

extension CLIAgainstArcadBinaryTests {
    /// Backups larger than one 2 MiB frame, through the real `arca` and real arcads, as the owner.
    @Suite struct LargeBackup {
        static let passphrase = "a long backup passphrase\n"
        static let count = 3000

        /// `count` items of 2 KiB random secrets, added by root for `uid` over one connection.
        static func fill(_ socket: String, uid: UInt32) throws {
            let client = try ArcadClient(path: socket, timeoutMilliseconds: 60_000)
            for i in 0..<count {
                let secret = (0..<2048).map { _ in UInt8.random(in: 0x21...0x7E) }
                let attributes: AttributeMap = [
                    .service: .string("svc\(i)"), .account: .string("acct"), .label: .string("item \(i)"),
                    .generic: .bytes([UInt8(i & 0xFF), UInt8(i >> 8)]),
                ]
                let reply = try client.send(
                    .add(
                        AddRequest(
                            vault: .user(uid: uid), itemClass: .genericPassword, attributes: attributes, secret: secret)
                    ))
                try #require(reply == .items([]), "add \(i): \(reply)")
            }
        }

        /// Every item `fill` made, with attributes and secret (nil where missing), asked one by one
        /// (all at once would not fit one reply frame).
        static func items(_ socket: String, uid: UInt32) throws -> [ResultItem?] {
            let client = try ArcadClient(path: socket, timeoutMilliseconds: 60_000)
            return try (0..<count).map { i in
                let query = Query(
                    itemClass: .genericPassword, attributes: [.service: .string("svc\(i)")],
                    returnFlags: [.data, .attributes])
                guard case .items(let found) = try client.send(.copyMatching(vault: .user(uid: uid), query: query))
                else { return nil }
                return found.first
            }
        }

        /// How many generic passwords `uid` has (attributes only: fits one reply).
        static func itemCount(_ socket: String, uid: UInt32) throws -> Int {
            let query = Query(itemClass: .genericPassword, matchLimit: .all, returnFlags: [.attributes])
            let reply = try ArcadClient(path: socket, timeoutMilliseconds: 60_000).send(
                .copyMatching(vault: .user(uid: uid), query: query))
            if case .items(let found) = reply { return found.count }
            if case .error(.itemNotFound, _) = reply { return 0 }
            return -1
        }

        /// A copy of `bytes` in the owner's home, as a file the owner may read.
        static func place(_ bytes: Data, at path: String, owner: TestUser) throws {
            try bytes.write(to: URL(fileURLWithPath: path))
            chown(path, owner.uid, owner.gid)
        }

        @Test func threeThousandItemsGoOutAndComeBackIntoAFreshStateDirectory() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let home = try Backup.ownersHome(arcad)
            let file = home + "/arca.backup"
            #expect(try arcad.arca(["init", "--no-recovery-key"], stdin: "pw\n").status == 0)
            try Self.fill(arcad.socket, uid: arcad.owner.uid)
            let exported = try arcad.arca(["export", "--to", file, "--passphrase"], stdin: Self.passphrase)
            #expect(exported == Run(status: 0, stdout: "exported to \(file)\n", stderr: ""))
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.count > 5 << 20, "\(bytes.count) bytes")
            #expect(bytes.range(of: Data("svc2999".utf8)) == nil)
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)

            // An export killed midway (SIGXFSZ past a 1 MiB file size limit) leaves no file at all.
            let killed = try run(
                arcad.owner.command([
                    "/bin/sh", "-c", "ulimit -f 1024; exec \"$0\" export --to \"$1\" --passphrase", arcaPath,
                    home + "/half.backup",
                ]), stdin: Self.passphrase, environment: ["ARCA_SOCKET": arcad.socket])
            #expect(killed.status != 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: home) == ["arca.backup"])

            // A fresh arcad, a fresh state directory, the same person.
            let fresh = try ArcadProcess(prefix: "arca-cli-restore")
            defer { fresh.stop() }
            func arcaFresh(_ arguments: [String], stdin: String = "") throws -> Run {
                try run(
                    arcad.owner.command([arcaPath] + arguments), stdin: stdin,
                    environment: ["ARCA_SOCKET": fresh.socket])
            }
            #expect(try arcaFresh(["init", "--no-recovery-key"], stdin: "another pw\n").status == 0)

            // Damaged or wrongly opened: exact error, and the vault stays empty.
            try Self.place(bytes.prefix(bytes.count / 2), at: home + "/truncated.backup", owner: arcad.owner)
            var flipped = bytes
            flipped[bytes.count / 2] ^= 0x01
            try Self.place(flipped, at: home + "/flipped.backup", owner: arcad.owner)
            let refused: [(String, String, Run)] = [
                (
                    "truncated.backup", Self.passphrase,
                    Run(
                        status: 1, stdout: "",
                        stderr: "arca: import: damaged data (malformed sync data: truncated record)\n")
                ),
                (
                    "arca.backup", "not the passphrase\n",
                    Run(status: 1, stdout: "", stderr: "arca: import: wrong password\n")
                ),
            ]
            // A byte flipped inside a record: its signature or AEAD fails (the exact words name the check).
            let altered = try arcaFresh(["import", "--from", home + "/flipped.backup"], stdin: Self.passphrase)
            #expect(altered.status == 1 && altered.stdout.isEmpty, "\(altered)")
            #expect(altered.stderr.hasPrefix("arca: import: damaged data ("), "\(altered)")
            #expect(try Self.itemCount(fresh.socket, uid: arcad.owner.uid) == 0)
            for (name, stdin, expected) in refused {
                let result = try arcaFresh(["import", "--from", home + "/" + name], stdin: stdin)
                #expect(result == expected, "\(name): \(result)")
                #expect(try Self.itemCount(fresh.socket, uid: arcad.owner.uid) == 0, "\(name)")
            }

            #expect(
                try arcaFresh(["import", "--from", file], stdin: Self.passphrase)
                    == Run(status: 0, stdout: "added 3000, replaced 0, unchanged 0\n", stderr: ""))
            let expected = try Self.items(arcad.socket, uid: arcad.owner.uid)
            #expect(expected.compactMap { $0 }.count == Self.count)
            #expect(try Self.items(fresh.socket, uid: arcad.owner.uid) == expected)
            #expect(
                try arcaFresh(["import", "--from", file], stdin: Self.passphrase)
                    == Run(status: 0, stdout: "added 0, replaced 0, unchanged 3000\n", stderr: ""))
            #expect(try Self.items(fresh.socket, uid: arcad.owner.uid) == expected)
            #expect(try Self.itemCount(fresh.socket, uid: arcad.owner.uid) == Self.count)
        }

        /// A backup sealed to the recovery key, opened with another: refused, nothing imported.
        @Test func wrongRecoveryKeyOnImport() throws {
            let arcad = try TestArcad()
            defer { arcad.stop() }
            let home = try Backup.ownersHome(arcad)
            let file = home + "/arca.backup"
            let made = try arcad.arca(["init"], stdin: "pw\n")
            let first = try #require(made.stdout.split(separator: "\n").last.map(String.init))
            #expect(try arcad.arca(["add", "-s", "mail", "-a", "alice"], stdin: "hunter2").status == 0)
            #expect(try arcad.arca(["export", "--to", file], stdin: first + "\n").status == 0)
            let rotated = try arcad.arca(["recovery", "--rotate"], stdin: "pw\n")
            let second = try #require(rotated.stdout.split(separator: "\n").last.map(String.init))
            #expect(try arcad.arca(["delete", "-s", "mail", "-a", "alice"]).status == 0)
            #expect(
                try arcad.arca(["import", "--from", file], stdin: second + "\n")
                    == Run(status: 1, stdout: "", stderr: "arca: import: wrong password\n"))
            #expect(try arcad.arca(["get", "-s", "mail", "-a", "alice"]).status == 44)
            #expect(
                try arcad.arca(["import", "--from", file], stdin: first + "\n")
                    == Run(status: 0, stdout: "added 1, replaced 0, unchanged 0\n", stderr: ""))
        }

        /// Attack: stagings flooded past the caps from many connections are refused, arcad's memory
        /// stays far below the sizes announced, and arcad keeps answering.
        @Test func aStagingFloodIsRefusedWithoutArcadGrowing() throws {
            let arcad = try ArcadProcess(prefix: "arca-cli-flood")
            defer { arcad.stop() }
            // Generous timeouts: each request is quick, but the machine may be loaded.
            let timeout = 60_000
            let piece = [UInt8](repeating: 0x5A, count: ProtocolLimits.maximumBackupChunkLength)
            var held: [ArcadClient] = []
            for (index, uid) in [UInt32(61_001), 61_002, 61_003].enumerated() {
                let client = try ArcadClient(path: arcad.socket, timeoutMilliseconds: timeout)
                held.append(client)
                let reply = try client.send(.stageImport(uid: uid, total: 256 << 20, offset: 0, chunk: piece))
                if index < 2 {
                    #expect(reply == .backupReceived(length: 1 << 20))
                } else {
                    #expect(
                        reply
                            == .error(
                                status: .notAvailable,
                                message: "arcad stages 536870912 bytes of other users' backups; 268435456 more "
                                    + "would pass its cap of 536870912 bytes; try again later"))
                }
            }
            let over = try ArcadClient(path: arcad.socket, timeoutMilliseconds: timeout).send(
                .stageImport(uid: 61_004, total: 256 << 20 + 1, offset: 0, chunk: piece))
            #expect(
                over
                    == .error(
                        status: .param,
                        message: "the backup is 268435457 bytes; arcad stages at most 268435456 bytes per user")
            )
            // A closed connection frees its slot: a new uid fits again.
            // (arcad notices the close on that connection's thread: asked again until then, 10 s at most).
            held.removeFirst()
            var again = Reply.ok
            for _ in 0..<100 {
                again = try ArcadClient(path: arcad.socket, timeoutMilliseconds: timeout).send(
                    .stageImport(uid: 61_005, total: 256 << 20, offset: 0, chunk: piece))
                if again == .backupReceived(length: 1 << 20) { break }
                usleep(100_000)
            }
            #expect(again == .backupReceived(length: 1 << 20))
            // 768 MiB announced in all and one staging dropped; only what arrived was ever in memory.
            let pid = try #require(arcad.process?.processIdentifier)
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let hwm = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            let kib = Int(hwm?.split(separator: " ").dropFirst().first ?? "") ?? .max
            #expect(kib < 128 << 10, "arcad's peak RSS: \(kib) kB")
            #expect(arcad.process?.isRunning == true)
            guard case .status = try arcad.send(.status(uid: 61_001), timeoutMilliseconds: timeout) else {
                Issue.record("arcad stopped answering")
                return
            }
        }
    }
}
