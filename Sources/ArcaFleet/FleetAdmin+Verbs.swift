import ArcaCrypto
import FoundationEssentials

/// Grants of a fleet item, by name (each host resolves them).
public struct FleetGrants: Sendable, Equatable {
    public var users: [String]
    public var groups: [String]
    public var units: [String]
    public init(users: [String] = [], groups: [String] = [], units: [String] = []) {
        self.users = users
        self.groups = groups
        self.units = units
    }
    public var isEmpty: Bool { users.isEmpty && groups.isEmpty && units.isEmpty }
}

extension FleetAdmin {
    /// `init`: a new admin key in this host's system vault, and the fleet head in etcd.
    /// Returns the admin public key (base64) that hosts pin at join.
    public func initialize(manifestLifetime: Int64) throws(FleetError) -> String {
        if (try? key()) != nil { throw .exists("an admin key is already in this host's system vault") }
        let admin: AdminKey
        do {
            let seed = try SecretBytes.random(count: FleetSodium.signSeedLength)
            admin = try AdminKey(seed: seed)
        } catch { throw .crypto("\(error)") }
        let head = Head(seq: 1, manifestLifetime: manifestLifetime, epochs: [:])
        let value: [UInt8]
        do { value = try SignedRecord.sign(head, kind: .head, seed: admin.seed).encoded() } catch {
            throw .crypto("\(error)")
        }
        guard try etcd.transaction([.absent(layout.head)], [.put(layout.head, value)]) else {
            throw .exists("a fleet head is already under \(layout.prefix)")
        }
        try vault.store(
            service: SystemVault.keyService, account: Self.keyAccount, secret: admin.seed,
            accessible: .afterFirstUnlockThisDeviceOnly)
        return admin.publicKeyText
    }

    /// `approve HOST… --group G…`: signs each host's join record with its groups and seals
    /// each group's current key to it, all in one write.
    public func approve(_ names: [String], groups: [String]) throws(FleetError) {
        let admin = try key()
        let snapshot = try snapshot(admin)
        var head = snapshot.head
        var hosts = snapshot.hosts
        var writes: [EtcdWrite] = []
        for name in names {
            guard var host = snapshot.joins[name] ?? snapshot.hosts[name] else {
                throw .notFound("host \(name) has not joined")
            }
            host.groups = Array(Set(groups)).sorted()
            do {
                for group in host.groups {
                    let epoch = head.epochs[group] ?? 1
                    head.epochs[group] = epoch
                    let sealed = try ItemSealing.sealGroupKey(
                        try groupKey(group, epoch: epoch, create: true), group: group, epoch: epoch, to: host)
                    writes.append(
                        .put(
                            layout.groupKey(group, epoch, name),
                            try SignedRecord.sign(sealed, kind: .groupKey, seed: admin.seed).encoded()))
                }
                writes.append(
                    .put(
                        layout.host(name),
                        try SignedRecord.sign(host, kind: .host, seed: admin.seed).encoded()))
            } catch let error as FleetError { throw error } catch { throw .crypto("\(error)") }
            hosts[name] = host
        }
        try commit(snapshot, admin: admin, head: head, hosts: hosts, items: snapshot.latest, writes: writes)
    }

    /// `remove HOST`: an empty manifest makes it revoke everything; its groups move to a
    /// new key epoch sealed to the remaining members, used by every later put and rotate.
    public func remove(_ name: String) throws(FleetError) {
        let admin = try key()
        let snapshot = try snapshot(admin)
        guard let removed = snapshot.hosts[name] else { throw .notFound("host \(name) is not approved") }
        var hosts = snapshot.hosts
        hosts[name] = nil
        var head = snapshot.head
        var writes: [EtcdWrite] = [.delete(layout.host(name)), .delete(layout.join(name))]
        do {
            for group in removed.groups {
                let old = head.epochs[group] ?? 1
                writes.append(.delete(layout.groupKey(group, old, name)))
                let epoch = old + 1
                head.epochs[group] = epoch
                let key = try groupKey(group, epoch: epoch, create: true)
                for member in hosts.values where member.groups.contains(group) {
                    let sealed = try ItemSealing.sealGroupKey(key, group: group, epoch: epoch, to: member)
                    writes.append(
                        .put(
                            layout.groupKey(group, epoch, member.host),
                            try SignedRecord.sign(sealed, kind: .groupKey, seed: admin.seed).encoded()))
                }
            }
        } catch let error as FleetError { throw error } catch { throw .crypto("\(error)") }
        try commit(
            snapshot, admin: admin, head: head, hosts: hosts, items: snapshot.latest, writes: writes,
            emptyManifests: [name])
    }

    /// `put` (`rotate: false`: the item must be new) and `rotate` (it must exist; version n+1,
    /// n kept for the overlap, older ones deleted). Grants and group of a rotation default to the item's.
    public func put(
        service: String, account: String, group: String?, grants: FleetGrants?, secret: SecretBytes, rotate: Bool
    ) throws(FleetError) -> UInt64 {
        let admin = try key()
        let snapshot = try snapshot(admin)
        let id: String
        do { id = try FleetName.itemID(service: service, account: account) } catch { throw .crypto("\(error)") }
        let previous = snapshot.latest[id]
        let live = snapshot.head.items[id] != nil
        if rotate, !live { throw .notFound("no fleet item \(service)/\(account) to rotate") }
        if !rotate, live { throw .exists("fleet item \(service)/\(account) (use rotate)") }
        guard let group = group ?? previous?.group else { throw .usage("--group is required") }
        let chosen =
            grants
            ?? FleetGrants(
                users: previous?.users ?? [], groups: previous?.groups ?? [], units: previous?.units ?? [])
        var head = snapshot.head
        let epoch = head.epochs[group] ?? 1
        head.epochs[group] = epoch
        let version = (head.items[id] ?? head.retired[id] ?? 0) + 1
        head.items[id] = version
        head.retired[id] = nil
        var item = ItemRecord(
            id: id, version: version, service: service, account: account, group: group, epoch: epoch,
            users: chosen.users, groups: chosen.groups, units: chosen.units, wrappedKey: Data(), ciphertext: Data())
        var writes: [EtcdWrite] = []
        do {
            try ItemSealing.seal(secret, into: &item, groupKey: try groupKey(group, epoch: epoch, create: true))
            let record = try SignedRecord.sign(item, kind: .item, seed: admin.seed).encoded()
            writes.append(.put(layout.item(id, version), record))
        } catch let error as FleetError { throw error } catch { throw .crypto("\(error)") }
        for old in (snapshot.items[id] ?? [:]).keys where old + 1 < version {
            writes.append(.delete(layout.item(id, old)))
        }
        var latest = snapshot.latest
        latest[id] = item
        try commit(snapshot, admin: admin, head: head, hosts: snapshot.hosts, items: latest, writes: writes)
        return version
    }

    /// `revoke`: the item leaves every manifest and etcd.
    public func revoke(service: String, account: String) throws(FleetError) {
        let admin = try key()
        let snapshot = try snapshot(admin)
        let id: String
        do { id = try FleetName.itemID(service: service, account: account) } catch { throw .crypto("\(error)") }
        guard let version = snapshot.head.items[id] else { throw .notFound("no fleet item \(service)/\(account)") }
        var head = snapshot.head
        head.items[id] = nil
        head.retired[id] = version
        var latest = snapshot.latest
        latest[id] = nil
        try commit(
            snapshot, admin: admin, head: head, hosts: snapshot.hosts, items: latest,
            writes: [.deletePrefix(layout.items + id + "/")])
    }

    /// `refresh`: re-signs every manifest with a new seq and not-after (run it well within the lifetime).
    public func refresh() throws(FleetError) {
        let admin = try key()
        let snapshot = try snapshot(admin)
        try commit(snapshot, admin: admin, hosts: snapshot.hosts, items: snapshot.latest, writes: [])
    }
}
