import Foundation
import Testing

@testable import ArcaSyncAgent

/// The REST client against a real Syncthing (Debian's `syncthing`, in the Makefile's DEPS) on
/// 127.0.0.1 with a generated API key; discovery, relays and reporting off.
@Suite(.serialized) final class SyncthingClientTests {
    let home: String
    let process: Process
    let client: SyncthingClient

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("arca-st-\(UUID().uuidString)").path
        let generate = Process()
        generate.executableURL = URL(fileURLWithPath: "/usr/bin/syncthing")
        generate.arguments = ["generate", "--home=\(home)", "--no-default-folder", "--skip-port-probing"]
        generate.standardOutput = FileHandle.nullDevice
        generate.standardError = FileHandle.nullDevice
        try generate.run()
        generate.waitUntilExit()
        #expect(generate.terminationStatus == 0, "syncthing generate failed: is syncthing installed?")
        let port = UInt16(20_000 + Int.random(in: 0..<30_000))
        var config = try String(contentsOfFile: home + "/config.xml", encoding: .utf8)
        for (from, to) in [
            ("127.0.0.1:8384", "127.0.0.1:\(port)"),
            ("<listenAddress>default", "<listenAddress>tcp://127.0.0.1:\(port + 1)"),
            ("<globalAnnounceEnabled>true", "<globalAnnounceEnabled>false"),
            ("<localAnnounceEnabled>true", "<localAnnounceEnabled>false"),
            ("<relaysEnabled>true", "<relaysEnabled>false"),
            ("<natEnabled>true", "<natEnabled>false"), ("<urAccepted>0", "<urAccepted>-1"),
            ("<crashReportingEnabled>true", "<crashReportingEnabled>false"),
        ] {
            config = config.replacingOccurrences(of: from, with: to)
        }
        try config.write(toFile: home + "/config.xml", atomically: true, encoding: .utf8)
        client = SyncthingClient(endpoint: try SyncthingEndpoint.parse(configXML: config))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/syncthing")
        process.arguments = ["serve", "--home=\(home)", "--no-browser", "--no-restart", "--no-upgrade"]
        process.environment = ["STNOUPGRADE": "1", "HOME": home, "PATH": "/usr/bin:/bin"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<300 where (try? client.deviceID()) == nil { usleep(50_000) }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: home)
    }

    @Test func deviceFolderScanAndEvents() throws {
        let me = try client.deviceID()
        #expect(me.count == 63)
        let peer = "A73WAPK-5QAOGTZ-SZO62VI-NDFOBMA-7VIFETD-MFNLHI6-ES53SRP-R7R5HAP"
        try client.addDevice(peer, name: "arca peer", addresses: ["tcp://127.0.0.1:9"])
        try client.addDevice(peer, name: "arca peer", addresses: ["tcp://127.0.0.1:9"])  // already there: no change
        #expect(try client.folder("arca-sync") == nil)
        let path = home + "/sync"
        try SyncFolder(root: path).create()
        try client.shareFolder("arca-sync", path: path, with: [me])
        #expect(try client.folder("arca-sync")?.path == path)
        #expect(try client.folder("arca-sync")?.devices == [me])
        try client.shareFolder("arca-sync", path: path, with: [me, peer])
        #expect(try client.folder("arca-sync")?.devices.sorted() == [me, peer].sorted())
        // A file written, a scan asked for: the index update comes through the event long-poll.
        let since = try client.events(since: 0, types: ["LocalIndexUpdated"], timeoutSeconds: 0).map(\.id).max() ?? 0
        try SyncFolder(root: path).write([1, 2, 3], device: String(repeating: "ab", count: 32), "head")
        try client.scan("arca-sync", sub: String(repeating: "ab", count: 32))
        let events = try client.events(since: since, types: ["LocalIndexUpdated"], timeoutSeconds: 20)
        #expect(events.contains { $0.type == "LocalIndexUpdated" && $0.folder == "arca-sync" })
        #expect(throws: SyncAgentError.self) { try client.scan("no-such-folder", sub: nil) }
    }

    @Test func aWrongKeyIsRefused() throws {
        let wrong = SyncthingClient(endpoint: .init(port: client.endpoint.port, apiKey: "wrong"))
        #expect(throws: SyncAgentError.syncthing("HTTP 403 for GET /rest/system/status: CSRF Error")) {
            try wrong.deviceID()
        }
    }

    /// The mesh reconciler against this real Syncthing: a member's card in the folder makes it a
    /// configured device shared with; its removal unshares and deletes it; a second run is a no-op.
    @Test func theMeshReconcilerAddsAndRemovesMembersDevices() throws {
        let me = try client.deviceID()
        let path = home + "/sync"
        let folder = SyncFolder(root: path)
        try folder.create()
        try client.shareFolder("arca-sync", path: path, with: [me])
        let own = String(repeating: "a1", count: 32)
        let peer = String(repeating: "b2", count: 32)
        let peerST = "A73WAPK-5QAOGTZ-SZO62VI-NDFOBMA-7VIFETD-MFNLHI6-ES53SRP-R7R5HAP"
        var logged: [String] = []
        let mesh = SyncMeshReconciler(client: client, folder: folder, device: own, log: { logged.append($0) })
        try mesh.publishCard()
        let card = SyncMesh.Card(parsing: folder.read(own, "syncthing") ?? [])
        #expect(card == SyncMesh.Card(syncthing: me, addresses: ["tcp://127.0.0.1:\(client.endpoint.port + 1)"]))

        try folder.write(
            SyncMesh.Card(syncthing: peerST, addresses: ["tcp://127.0.0.1:9"]).bytes, device: peer, "syncthing")
        let members = [SyncMesh.Member(device: own, removed: false), SyncMesh.Member(device: peer, removed: false)]
        let added = try mesh.reconcile(members)
        #expect(added?.add.map(\.card.syncthing) == [peerST])
        #expect(try client.devices()[peerST] == "arca b2b2b2b2b2b2b2b2")
        #expect(try client.folder("arca-sync")?.devices.sorted() == [me, peerST].sorted())
        #expect(try mesh.reconcile(members) == nil)

        let removed = [SyncMesh.Member(device: own, removed: false), SyncMesh.Member(device: peer, removed: true)]
        let plan = try mesh.reconcile(removed)
        #expect(plan == SyncMesh.Plan(add: [], folderDevices: [me], delete: [peerST]))
        #expect(try client.devices()[peerST] == nil)
        #expect(try client.folder("arca-sync")?.devices == [me])
        #expect(logged.count == 4)
    }
}
