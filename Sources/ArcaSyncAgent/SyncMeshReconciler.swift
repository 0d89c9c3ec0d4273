import ArcaProtocol
import ArcaSync

/// Applies ``SyncMesh`` to this device's Syncthing: publishes this device's card, and when the
/// circle or a member's card changed since the last time (and at start), adds, shares, unshares
/// and deletes devices as ``SyncMesh/plan(_:)`` says. Idempotent: a second run with nothing
/// changed makes no REST call past the reads.
final class SyncMeshReconciler {
    let client: SyncthingClient
    let folder: SyncFolder
    let device: String
    let log: (String) -> Void
    /// The circle and cards last reconciled (nothing to do while they stay the same).
    var reconciled: [String]?

    init(client: SyncthingClient, folder: SyncFolder, device: String, log: @escaping (String) -> Void) {
        self.client = client
        self.folder = folder
        self.device = device
        self.log = log
    }

    /// The members of `status` (empty while a join waits: its circle is not known yet).
    static func members(_ status: SyncStatus) -> [SyncMesh.Member] {
        status.devices.map { SyncMesh.Member(device: Hex.encode($0.id), removed: $0.removedAfter != nil) }
    }

    /// Publishes this device's card when it changed (then one scan of this device's directory).
    func publishCard() throws(SyncAgentError) {
        let card = SyncMesh.Card(
            syncthing: try client.deviceID(), addresses: SyncMesh.publishable(listen: try client.listenAddresses()))
        guard folder.read(device, "syncthing") != card.bytes else { return }
        try folder.write(card.bytes, device: device, "syncthing")
        try client.scan(SyncCLI.folderID, sub: device)
    }

    /// Reconciles with `members` when they or their cards changed; returns the plan applied (nil: unchanged).
    @discardableResult
    func reconcile(_ members: [SyncMesh.Member]) throws(SyncAgentError) -> SyncMesh.Plan? {
        var cards: [String: SyncMesh.Card] = [:]
        var fingerprint: [String] = []
        for member in members.sorted(by: { $0.device < $1.device }) where SyncFolder.isDeviceName(member.device) {
            let bytes = folder.read(member.device, "syncthing")
            if let bytes, let card = SyncMesh.Card(parsing: bytes) { cards[member.device] = card }
            fingerprint.append("\(member.device) \(member.removed) \(bytes.map { Hex.encode($0) } ?? "-")")
        }
        guard fingerprint != reconciled else { return nil }
        let me = try client.deviceID()
        let folders = try client.folders()
        let state = SyncMesh.State(
            device: device, syncthing: me, members: members, cards: cards, configured: try client.devices(),
            shared: folders[SyncCLI.folderID] ?? [me],
            inOtherFolders: Set(folders.filter { $0.key != SyncCLI.folderID }.values.joined()))
        let plan = SyncMesh.plan(state)
        try apply(plan)
        reconciled = fingerprint
        return plan
    }

    func apply(_ plan: SyncMesh.Plan) throws(SyncAgentError) {
        for peer in plan.add {
            try client.addDevice(
                peer.card.syncthing, name: SyncMesh.deviceName(peer.device), addresses: peer.card.addresses)
            log("mesh: added Syncthing device \(peer.card.syncthing.prefix(7)) of \(peer.device.prefix(16))")
        }
        if let devices = plan.folderDevices {
            if try client.folder(SyncCLI.folderID) == nil {
                try client.shareFolder(SyncCLI.folderID, path: folder.root, with: devices)
            } else {
                try client.setFolderDevices(SyncCLI.folderID, devices)
            }
            log("mesh: folder shared with \(devices.count) device(s)")
        }
        for device in plan.delete {
            try client.deleteDevice(device)
            log("mesh: removed Syncthing device \(device.prefix(7))")
        }
    }
}
