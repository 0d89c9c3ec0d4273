import ArcaCrypto
import ArcaSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// The host side: `join`, and the agent loop that watches this host's manifest,
/// verifies, and applies into arcad's system vault.
public final class HostAgent {
    /// The system-vault account holding the host's two secret keys.
    public static let keyAccount = "host-key"
    let config: FleetConfig
    let host: String
    let etcd: EtcdClient
    let vault: SystemVault
    let layout: FleetLayout
    var state: HostState
    var statePath: String { config.stateDirectory + "/state.json" }
    /// Where progress and refusals go (stderr; the journal under systemd).
    public var log: (String) -> Void = { line in
        try? FileDescriptor.standardError.writeAll("arca-fleetd: " + line + "\n")
    }
    public var now: () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    public init(config: FleetConfig, etcd: EtcdClient) throws(FleetError) {
        guard let host = config.host else { throw .usage("fleet.conf has no host (run `arca fleet join`)") }
        self.config = config
        self.host = host
        self.etcd = etcd
        self.vault = SystemVault(socket: config.socket)
        self.layout = config.keys
        state = Self.loadState(config.stateDirectory + "/state.json")
    }

    static func loadState(_ path: String) -> HostState {
        guard let bytes = FileIO.read(path), let state = try? JSONDecoder().decode(HostState.self, from: Data(bytes))
        else { return HostState() }
        return state
    }

    /// The state as saved by the agent (for `status --local`).
    public static func savedState(_ config: FleetConfig) -> HostState {
        loadState(config.stateDirectory + "/state.json")
    }

    func saveState() {
        FileIO.makeDirectory(config.stateDirectory)
        if let bytes = try? Wire.encode(state) { try? FileIO.writeAtomically(statePath, bytes) }
    }

    /// This host's keys from the system vault; `create` makes them on first join.
    public func keys(create: Bool) throws(FleetError) -> HostKeys {
        do {
            if let stored = try vault.fetch(service: SystemVault.keyService, account: Self.keyAccount) {
                return try HostKeys(stored: stored)
            }
            guard create else { throw FleetError.notFound("no host key in the system vault (run `arca fleet join`)") }
            let stored = try HostKeys.generateStored()
            try vault.store(
                service: SystemVault.keyService, account: Self.keyAccount, secret: stored,
                accessible: .afterFirstUnlockThisDeviceOnly)
            return try HostKeys(stored: stored)
        } catch let error as FleetError { throw error } catch { throw .crypto("\(error)") }
    }

    /// `join`: publishes this host's public keys, self-signed, for an admin to approve.
    public func join() throws(FleetError) {
        let keys = try keys(create: true)
        let record: [UInt8]
        do {
            record = try SignedRecord.sign(keys.joinRecord(host: host), kind: .join, seed: keys.signSeed).encoded()
        } catch { throw .crypto("\(error)") }
        try etcd.put(layout.join(host), record)
    }

    /// One pass: read the manifest, verify, apply, ack. Returns the revision read.
    @discardableResult
    public func synchronize(_ verifier: HostVerifier) throws(FleetError) -> Int64 {
        let manifestRead: EtcdRange
        do { manifestRead = try etcd.read([layout.manifest(host)]) } catch {
            if state.outOfTouchSince == nil {
                state.outOfTouchSince = now()
                log("out of touch with etcd: \(error)")
            }
            saveState()
            throw error
        }
        if state.outOfTouchSince != nil { log("in touch with etcd again") }
        state.outOfTouchSince = nil
        state.lastContact = now()
        defer { saveState() }
        guard let value = manifestRead[layout.manifest(host)] else {
            state.errors = ["no manifest yet (approved?)"]
            return manifestRead.revision
        }
        let manifest: Manifest
        do { manifest = try verifier.manifest(value.value, state: state, now: now()) } catch {
            state.errors = [error.description]
            log(error.description)
            try? acknowledge(verifier.keys, revision: manifestRead.revision)
            return manifestRead.revision
        }
        let wanted = verifier.wanted(manifest, state: state)
        var items: [String: [UInt8]] = [:]
        var groupKeys: [String: [UInt8]] = [:]
        if !wanted.isEmpty {
            let itemRead = try etcd.read(wanted.map { layout.item($0.id, $0.version) })
            var groupKeyNames: Set<String> = []
            for entry in wanted {
                guard let kv = itemRead[layout.item(entry.id, entry.version)] else { continue }
                items[entry.id] = kv.value
                // Unverified peek at group/epoch, only to know which group key to read;
                // the verifier checks the signature before anything is used.
                if let record = try? SignedRecord.decode(kv.value, what: ""),
                    let body = try? JSONDecoder().decode(ItemRecord.self, from: record.body),
                    FleetName.isValid(body.group)
                {
                    groupKeyNames.insert("\(body.group)/\(body.epoch)")
                }
            }
            let names = groupKeyNames.sorted()
            let keyRead = try etcd.read(names.map { layout.prefix + "groups/\($0)/\(host)" })
            for name in names {
                if let kv = keyRead[layout.prefix + "groups/\(name)/\(host)"] { groupKeys[name] = kv.value }
            }
        }
        let plan = verifier.plan(manifest, items: items, groupKeys: groupKeys, state: state)
        var errors = plan.errors
        for item in plan.apply {
            do {
                try apply(item)
                state.items[item.record.id] = item.applied
                log("applied \(item.record.service)/\(item.record.account) v\(item.record.version)")
            } catch { errors.append(error.description) }
        }
        for item in plan.remove {
            do {
                try vault.remove(service: item.service, account: item.account)
                state.items[item.id] = nil
                log("revoked \(item.service)/\(item.account)")
            } catch { errors.append(error.description) }
        }
        for error in errors { log(error) }
        state.seq = manifest.seq
        state.notAfter = manifest.notAfter
        state.revision = manifestRead.revision
        state.errors = errors
        try? acknowledge(verifier.keys, revision: manifestRead.revision)
        return manifestRead.revision
    }

    func apply(_ item: VerifiedItem) throws(FleetError) {
        let record = item.record
        let resolved = PrincipalNames.resolve(
            users: record.users, groups: record.groups, units: record.units, defaultCredential: record.service)
        try vault.store(service: record.service, account: record.account, secret: item.secret)
        let previous = state.items[record.id]
        if previous == nil || previous?.users != record.users || previous?.groups != record.groups
            || previous?.units != record.units
        {
            try vault.setGrants(service: record.service, account: record.account, principals: resolved.principals)
        }
        if !resolved.unknown.isEmpty {
            throw .notFound("\(record.service)/\(record.account): " + resolved.unknown.joined(separator: ", "))
        }
    }

    func acknowledge(_ keys: HostKeys, revision: Int64) throws {
        let ack = Ack(host: host, seq: state.seq, revision: revision, at: now(), errors: state.errors)
        try etcd.put(layout.ack(host), try SignedRecord.sign(ack, kind: .ack, seed: keys.signSeed).encoded())
    }

    /// Past the manifest's not-after without a newer one: stop serving fleet items.
    func enforceExpiry() {
        guard state.notAfter > 0, now() >= state.notAfter, !state.items.isEmpty else { return }
        log("manifest seq \(state.seq) expired without a newer one: revoking every fleet item")
        for item in state.items.values {
            if (try? vault.remove(service: item.service, account: item.account)) != nil { state.items[item.id] = nil }
        }
        state.errors = ["manifest expired"]
        saveState()
    }
}
