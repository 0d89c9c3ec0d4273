import ArcaClient
import ArcaCrypto
import ArcaProtocol
import ArcaSync

/// `recover`: every device of the circle is lost. On a fresh device whose synced folder holds
/// a copy of the circle's files, the recovery key (stdin: a no-echo prompt, or a piped line;
/// never argv) opens a recovery seal there; arcad takes the circle over with a new device
/// identity (the old devices removed at their last head, a new epoch), and the old devices'
/// records in the folder are verified and applied into this vault at once.
extension SyncSetup {
    /// The most recovery seals offered to arcad (one per device that ever sealed one).
    static let maximumSeals = 64

    func recover() throws(SyncAgentError) {
        let path = try folderPath()
        let folder = SyncFolder(root: path)
        let files = Self.recoveryFiles(folder)
        guard files.contains(where: { $0.kind == .approval }) else {
            throw .folder(
                "no recovery seal in \(path): is it a copy of the circle's synced folder (see --folder)? "
                    + "(a seal is written once a member's arcad has seen the vault's recovery key)")
        }
        let secret: SecretBytes
        do {
            secret = try SecretReader().line(prompt: "recovery key: ", limit: ProtocolLimits.maximumRecoveryKeyLength)
        } catch {
            switch error {
            case .noInput, .tooLong: throw .usage("no recovery key on stdin")
            case .outOfMemory: throw .usage("out of secure memory")
            case .read(let errno): throw .usage("cannot read stdin: \(errno)")
            }
        }
        var text = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&text) }
        let link = try link()
        let device: [UInt8]
        let arcad = try link.connect()
        do { device = try arcad.syncRecover(uid: uid, files: files, secret: text) } catch {
            if case .refused(.authFailed, _) = error {
                throw .notConfirmed("wrong recovery key: it opens no recovery seal in \(path); nothing changed")
            }
            throw .arcad("recover: \(error.description)")
        }
        // The old devices' records, verified and merged now (the agent would do it when it runs).
        let client = syncthing
        let agent = try SyncAgent(
            device: Hex.encode(device), arcad: link, folder: folder,
            scanner: { (sub: String) throws(SyncAgentError) in _ = try? client.scan(SyncCLI.folderID, sub: sub) },
            log: { Console.err("arca sync: \($0)\n") })
        let moved = try agent.pass()
        let status = try link.status()
        // The circle is recovered whether or not Syncthing answers now: the agent shares the folder when it runs.
        let me = (try? syncthing.deviceID()).map { DeviceAddress(arca: Hex.encode(device), syncthing: $0).description }
        Console.out(
            """
            recovered the circle: this device \(me ?? Hex.encode(device) + " (Syncthing is not reachable now)")
            \(moved.pushed) file(s) of the old devices verified and applied; \
            \(status.devices.filter { $0.removedAfter != nil }.count) old device(s) removed; epoch \(status.epoch)
            keep `arca sync run` going here; add devices with `arca sync join` there and `arca sync approve` here

            """)
    }

    /// The recovery seals (approvals that are `RecoverySeal`s, by their magic) and heads of
    /// every device directory of `folder`.
    static func recoveryFiles(_ folder: SyncFolder) -> [SyncFile] {
        var files: [SyncFile] = []
        var seals = 0
        for device in folder.devices() {
            guard let author = Hex.decode(device) else { continue }
            for name in folder.approvals(device) where seals < maximumSeals {
                guard let bytes = folder.read(device, "approvals", name), RecoverySeal.isSeal(bytes)
                else { continue }
                files.append(SyncFile(kind: .approval, author: author, bytes: bytes))
                seals += 1
            }
            if let head = folder.read(device, "head") {
                files.append(SyncFile(kind: .head, author: author, bytes: head))
            }
        }
        return files
    }
}
