import ArcaSync

/// join, approve, remove and status (run is in SyncSetup+Run.swift).
extension SyncSetup {
    /// `join`: a device identity here that expects `approver`'s approval; Syncthing learns the
    /// approver and shares the folder with it. Prints this device and the code to compare.
    func join(_ approver: DeviceAddress, address: String?) throws(SyncAgentError) {
        let approverID = try Self.deviceID(approver.arca)
        let link = try link()
        let mine = try link.join(approver: approverID.bytes)
        let me = DeviceAddress(arca: Hex.encode(mine), syncthing: try syncthing.deviceID())
        try syncthing.addDevice(
            approver.syncthing, name: "arca " + approverID.short, addresses: [address ?? "dynamic"])
        _ = try share(with: [approver.syncthing])
        let code = Enrollment.shortAuthenticationString(approverID, try Self.deviceID(me.arca))
        Console.out(
            """
            this device: \(me)
            verification code: \(Self.spaced(code))
            on the approving device run: arca sync approve \(me)
            then keep `arca sync run` going here (or enable arca-sync.service)

            """)
    }

    /// `approve`: shows the code and asks (or checks `--sas` with `--yes`), has arcad sign the
    /// approval, writes it into this device's directory, and shares the folder with the device.
    func approve(_ device: DeviceAddress, address: String?, sas: String?, yes: Bool) throws(SyncAgentError) {
        let deviceID = try Self.deviceID(device.arca)
        let link = try link()
        let mine = try ownDevice(link)
        let code = Enrollment.shortAuthenticationString(try Self.deviceID(Hex.encode(mine)), deviceID)
        if yes {
            guard let sas else { throw .usage("--yes needs --sas CODE (the code the joining device shows)") }
            guard sas.filter({ $0 != " " }) == code else {
                throw .notConfirmed("the code given (\(sas)) is not this pair's code: nothing approved")
            }
        } else {
            guard Console.interactive else {
                throw .notConfirmed("approve asks for confirmation on a terminal; for scripts use --sas CODE --yes")
            }
            Console.out("verification code: \(Self.spaced(code))\ndoes \(deviceID.short)… show the same code? [y/N] ")
            guard let answer = Console.readLine(), ["y", "yes"].contains(answer.trimmed.lowercased()) else {
                throw .notConfirmed("not confirmed: nothing approved")
            }
        }
        let arcadCode = try link.approvalCode(deviceID.bytes)
        guard arcadCode == code else { throw .arcad("arcad's code \(arcadCode) differs from \(code)") }
        let approval = try link.approve(deviceID.bytes, code: code)
        let path = try folderPath()
        let folder = SyncFolder(root: path)
        try folder.create()
        try folder.write(approval, device: Hex.encode(mine), "approvals", device.arca)
        try syncthing.addDevice(device.syncthing, name: "arca " + deviceID.short, addresses: [address ?? "dynamic"])
        _ = try share(with: [device.syncthing])
        try syncthing.scan(SyncCLI.folderID, sub: Hex.encode(mine))
        Console.out("approved \(deviceID.short)…; it takes the circle key when its agent runs\n")
    }

    /// `remove`: arcad rotates the epoch key to the remaining devices and says what the removed one
    /// saw; then this device's Syncthing unshares the folder from the removed device and forgets it.
    func remove(_ hex: String) throws(SyncAgentError) {
        let device = try Self.deviceID(hex.lowercased())
        let link = try link()
        let removal = try link.remove(device.bytes)
        let seen = removal.seenItems
        Console.out(
            "removed \(device.short)…; epoch \(removal.epoch) sealed to the remaining devices and the recovery key\n")
        if seen.isEmpty {
            Console.out("it had seen no synchronizable item\n")
        } else {
            Console.out("it had seen \(seen.count) item(s); change these secrets:\n")
            for item in seen { Console.out("  \(item)\n") }
        }
        // This Syncthing stops sharing with it now; the others' agents do when the circle update reaches them.
        // The removal itself is done: a Syncthing that does not answer now is left to this device's agent.
        do {
            let mesh = SyncMeshReconciler(
                client: syncthing, folder: SyncFolder(root: try folderPath()), device: Hex.encode(try ownDevice(link)),
                log: { _ in })
            if let plan = try mesh.reconcile(SyncMeshReconciler.members(try link.status())),
                plan.folderDevices != nil || !plan.delete.isEmpty
            {
                Console.out("the folder is no longer shared with its Syncthing device here\n")
            }
        } catch {
            Console.err("arca sync: \(error.description); `arca sync run` unshares it from Syncthing later\n")
        }
    }

    /// `status`: this device (as others pass it to join/approve), then arcad's view of the circle.
    func status(json: Bool) throws(SyncAgentError) {
        let link = try link()
        let report = try link.status(detailed: true)
        let me = DeviceAddress(arca: Hex.encode(report.device), syncthing: try syncthing.deviceID())
        let path = try folderPath()
        Console.out(
            json
                ? SyncStatusReport.json(report, address: me, folder: path)
                : SyncStatusReport.text(report, address: me, folder: path))
    }

    static func spaced(_ code: String) -> String { String(code.prefix(3)) + " " + String(code.dropFirst(3)) }
}
