import ArcaCrypto
import FoundationEssentials

/// The fleet as an admin reads it: every record under the prefix that verifies, at one revision.
public struct FleetSnapshot {
    /// The revision read.
    public var revision: Int64
    /// The head and the revision it was last written at (the admin's write condition).
    public var head: Head
    public var headRevision: Int64
    /// Approved hosts.
    public var hosts: [String: HostRecord] = [:]
    /// Join requests not approved yet (self-signed by the host).
    public var joins: [String: HostRecord] = [:]
    /// Item versions by id.
    public var items: [String: [UInt64: ItemRecord]] = [:]
    /// Acks that verify against their host's key.
    public var acks: [String: Ack] = [:]
    /// Keys whose value failed verification (someone other than the admin wrote them).
    public var rejected: [String] = []

    /// The record of each live item at its current version (or, if that record does not
    /// verify, its newest one that does, for the group and grants).
    public var latest: [String: ItemRecord] {
        var result: [String: ItemRecord] = [:]
        for (id, version) in head.items {
            guard let versions = items[id] else { continue }
            var record = versions[version] ?? versions.max { $0.key < $1.key }?.value
            record?.version = version
            result[id] = record
        }
        return result
    }
}

/// The admin's side: reads, verifies, and writes the fleet with transactions
/// conditioned on the head the admin read, so two admins never overwrite each other.
public final class FleetAdmin {
    /// The system-vault account holding the admin's Ed25519 seed.
    public static let keyAccount = "admin-key"
    let etcd: EtcdClient
    let layout: FleetLayout
    let vault: SystemVault
    /// Unix seconds, for manifests' not-after (tests move it).
    public var now: () -> Int64 = { Int64(Date().timeIntervalSince1970) }

    public init(etcd: EtcdClient, layout: FleetLayout, vault: SystemVault) {
        self.etcd = etcd
        self.layout = layout
        self.vault = vault
    }

    /// The admin key from this host's system vault.
    public func key() throws(FleetError) -> AdminKey {
        guard let seed = try vault.fetch(service: SystemVault.keyService, account: Self.keyAccount) else {
            throw .notFound("no admin key in this host's system vault (run `arca fleet init`)")
        }
        do { return try AdminKey(seed: seed) } catch { throw .crypto("\(error)") }
    }

    /// The key of `group` at `epoch`, created (and kept in the system vault) if new.
    func groupKey(_ group: String, epoch: UInt64, create: Bool) throws(FleetError) -> SecretBytes {
        let account = "group:\(group):\(epoch)"
        if let key = try vault.fetch(service: SystemVault.keyService, account: account) { return key }
        guard create else { throw .notFound("group key \(group)/\(epoch) is not in this admin's system vault") }
        let key: SecretBytes
        do { key = try SecretBytes.random(count: 32) } catch { throw .crypto("\(error)") }
        try vault.store(
            service: SystemVault.keyService, account: account, secret: key,
            accessible: .afterFirstUnlockThisDeviceOnly)
        return key
    }

    /// Reads and verifies everything under the prefix.
    public func snapshot(_ admin: AdminKey) throws(FleetError) -> FleetSnapshot {
        let range = try etcd.range(layout.prefix, prefix: true)
        guard let headValue = range[layout.head] else { throw .notFound("no fleet under \(layout.prefix) (run init)") }
        let head = try SignedRecord.decode(headValue.value, what: "head").verified(
            as: Head.self, kind: .head, publicKey: admin.publicKey, what: "head")
        var snapshot = FleetSnapshot(revision: range.revision, head: head, headRevision: headValue.modRevision)
        var ackValues: [String: [UInt8]] = [:]
        for kv in range.values where kv.key != layout.head {
            let path = kv.key.dropFirst(layout.prefix.count).split(separator: "/").map(String.init)
            do {
                let record = try SignedRecord.decode(kv.value, what: kv.key)
                switch (path.first, path.count, path.last) {
                case ("hosts", 3, "pub"):
                    let host = try record.verified(
                        as: HostRecord.self, kind: .host, publicKey: admin.publicKey,
                        what: kv.key)
                    guard host.host == path[1] else { throw FleetError.verification("\(kv.key): names \(host.host)") }
                    snapshot.hosts[host.host] = host
                case ("hosts", 3, "join"):
                    let join = try SignedRecord.decode(kv.value, what: kv.key)
                    let body = try JSONDecoder().decode(HostRecord.self, from: join.body)
                    let verified = try join.verified(
                        as: HostRecord.self, kind: .join,
                        publicKey: Array(body.signPublicKey), what: kv.key)
                    guard verified.host == path[1] else {
                        throw FleetError.verification("\(kv.key): names \(body.host)")
                    }
                    snapshot.joins[verified.host] = verified
                case ("hosts", 3, "ack"):
                    ackValues[path[1]] = kv.value
                case ("items", 3, _):
                    let item = try record.verified(
                        as: ItemRecord.self, kind: .item, publicKey: admin.publicKey,
                        what: kv.key)
                    guard item.id == path[1], String(item.version) == path[2] else {
                        throw FleetError.verification("\(kv.key): holds item \(item.id) v\(item.version)")
                    }
                    snapshot.items[item.id, default: [:]][item.version] = item
                default:
                    // Manifests and group keys are the admin's own output, rewritten on each write.
                    continue
                }
            } catch {
                snapshot.rejected.append(kv.key)
            }
        }
        for (name, value) in ackValues {
            guard let host = snapshot.hosts[name],
                let ack = try? SignedRecord.decode(value, what: "ack").verified(
                    as: Ack.self, kind: .ack, publicKey: Array(host.signPublicKey), what: "ack"), ack.host == name
            else {
                snapshot.rejected.append(layout.ack(name))
                continue
            }
            snapshot.acks[name] = ack
        }
        for name in snapshot.hosts.keys { snapshot.joins[name] = nil }
        return snapshot
    }

    /// Writes `writes`, then a new head (seq + 1) and every approved host's manifest
    /// signed with that seq, if the head is still the one read; else `.conflict`.
    func commit(
        _ snapshot: FleetSnapshot, admin: AdminKey, head newHead: Head? = nil, hosts: [String: HostRecord],
        items: [String: ItemRecord], writes: [EtcdWrite], emptyManifests: [String] = []
    ) throws(FleetError) {
        var head = newHead ?? snapshot.head
        head.seq = snapshot.head.seq + 1
        var all = writes
        do {
            all.append(.put(layout.head, try SignedRecord.sign(head, kind: .head, seed: admin.seed).encoded()))
            let notAfter = now() + head.manifestLifetime
            for (name, host) in hosts {
                let entries = items.values.filter { host.groups.contains($0.group) }
                    .map { ManifestEntry(id: $0.id, version: $0.version) }.sorted { $0.id < $1.id }
                let manifest = Manifest(host: name, seq: head.seq, notAfter: notAfter, entries: entries)
                all.append(
                    .put(
                        layout.manifest(name),
                        try SignedRecord.sign(manifest, kind: .manifest, seed: admin.seed).encoded()))
            }
            for name in emptyManifests {
                let manifest = Manifest(host: name, seq: head.seq, notAfter: notAfter, entries: [])
                all.append(
                    .put(
                        layout.manifest(name),
                        try SignedRecord.sign(manifest, kind: .manifest, seed: admin.seed).encoded()))
            }
        } catch { throw .crypto("\(error)") }
        guard try etcd.transaction([.modRevision(layout.head, snapshot.headRevision)], all) else {
            throw .conflict
        }
    }
}
