import ArcaSync
import ArcaThreads
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// `run`: the agent. Two watchers block in long-polls — Syncthing's GET /rest/events (a peer's
/// file arrived in the folder) and arcad's waitEvents (the vault or sync state changed) — and
/// wake the loop, which runs one ``SyncAgent/pass()``. Nothing runs on a timer (an idle agent
/// wakes when one of the long-polls reports a change) except while arcad holds files the agent
/// handed over that may expire (``SyncAgent/awaitingQueued``): then a pass runs at least every
/// `expiryCheckSeconds`, so that expired files are offered again without a restart.
/// After each pass the Syncthing mesh is reconciled with the circle (``SyncMeshReconciler``).
extension SyncSetup {
    func run() throws(SyncAgentError) -> Never {
        let path = try share(with: [])
        let folder = SyncFolder(root: path)
        let link = try link()
        let device = Hex.encode(try ownDevice(link))
        let client = syncthing
        let agent = try SyncAgent(
            device: device, arcad: link, folder: folder,
            scanner: { (sub: String) throws(SyncAgentError) in try client.scan(SyncCLI.folderID, sub: sub) },
            log: { Console.err("arca-sync: \($0)\n") })
        let mesh = SyncMeshReconciler(
            client: client, folder: folder, device: device, log: { Console.err("arca-sync: \($0)\n") })
        var published = false
        Console.err("arca-sync: device \(device.prefix(16))… folder \(path)\n")
        let wake = DispatchSemaphore(value: 1)
        let socket = self.socket
        let uid = self.uid
        do {
            try DetachedThread.start { Self.watchSyncthing(client, own: device, wake: wake) }
            try DetachedThread.start { Self.watchArcad(socket: socket, uid: uid, wake: wake) }
        } catch {
            // Without both watchers the agent would never wake for one of its sources.
            throw .arcad("cannot start a watcher thread: \(error)")
        }
        var failures = 0
        while true {
            if agent.awaitingQueued {
                _ = wake.wait(timeout: .now() + .seconds(Self.expiryCheckSeconds))
            } else {
                wake.wait()
            }
            // Coalesce a burst of wake-ups into one pass.
            while wake.wait(timeout: .now()) == .success {}
            _ = link.takeStatus()  // never one from an earlier pass
            do {
                try agent.pass()
                // The mesh follows the circle: at start, and after a pass that changed it or a card.
                if !published {
                    try mesh.publishCard()
                    published = true
                }
                // The pass's own status when it asked one (`??` would lose the typed throw).
                var status = link.takeStatus()
                if status == nil { status = try link.status() }
                if let status { try mesh.reconcile(SyncMeshReconciler.members(status)) }
                failures = 0
            } catch {
                failures += 1
                Console.err("arca-sync: \(error.description)\n")
                // Retry after a bounded back-off, then only on the next event.
                Self.pause(seconds: min(30, failures))
                wake.signal()
            }
        }
    }

    /// Syncthing's events of the folder: a file finished arriving in a peer's directory.
    static func watchSyncthing(_ client: SyncthingClient, own: String, wake: DispatchSemaphore) {
        var since = 0
        var failures = 0
        while true {
            do {
                let events = try client.events(since: since, types: ["ItemFinished"], timeoutSeconds: 60)
                failures = 0
                if events.contains(where: { $0.folder == SyncCLI.folderID && !($0.item ?? "").hasPrefix(own) }) {
                    wake.signal()
                }
                since = events.map(\.id).max() ?? since
            } catch {
                // Syncthing restarted (event ids start again) or is down: back off, start over.
                failures += 1
                if failures == 1 { Console.err("arca-sync: \(error.description)\n") }
                since = 0
                pause(seconds: min(30, failures))
                wake.signal()
            }
        }
    }

    /// arcad's event stream for the user: any item change or lock change may mean new records.
    static func watchArcad(socket: String, uid: UInt32, wake: DispatchSemaphore) {
        var after: UInt64 = 0
        var failures = 0
        while true {
            do {
                // The receive timeout outlasts arcad's longest wait.
                let link = try ArcadSyncLink(socket: socket, uid: uid, timeoutMilliseconds: 40_000)
                failures = 0
                while true {
                    let result = try link.wait(after: after, timeoutMilliseconds: 25_000)
                    after = result.next
                    if result.changed { wake.signal() }
                }
            } catch {
                failures += 1
                if failures == 1 { Console.err("arca-sync: \(error.description)\n") }
                pause(seconds: min(30, failures))
                wake.signal()
            }
        }
    }

    /// How often a pass runs while arcad holds files that may expire (they wait 24 hours).
    static let expiryCheckSeconds = 3_600

    static func pause(seconds: Int) {
        // sleep(3) resumes nothing after a signal; the agent has no handler, so one call is enough.
        _ = sleep(UInt32(seconds))
    }
}
