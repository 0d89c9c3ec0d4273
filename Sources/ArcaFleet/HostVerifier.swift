import ArcaCrypto

/// An item as a host applied it (kept in the host's state file).
public struct AppliedItem: Codable, Sendable, Equatable {
    public var id: String
    public var version: UInt64
    public var service: String
    public var account: String
    public var users: [String]
    public var groups: [String]
    public var units: [String]
}

/// What a host has applied, persisted in `<state_dir>/state.json` (0600).
public struct HostState: Codable, Sendable, Equatable {
    /// The seq of the last manifest accepted: a lower one is a replay.
    public var seq: UInt64 = 0
    /// That manifest's not-after.
    public var notAfter: Int64 = 0
    /// The etcd revision it was read at (a restarted agent watches from here).
    public var revision: Int64 = 0
    public var items: [String: AppliedItem] = [:]
    /// Unix seconds of the last successful read from etcd.
    public var lastContact: Int64?
    /// Unix seconds since when etcd has been unreachable, nil while in touch.
    public var outOfTouchSince: Int64?
    /// What the last pass refused or failed, for the ack and `arca fleet status`.
    public var errors: [String] = []

    public init() {}
}

/// One item version that verified and decrypted, to be put into the system vault.
public final class VerifiedItem {
    public let record: ItemRecord
    public let secret: SecretBytes
    init(record: ItemRecord, secret: SecretBytes) {
        self.record = record
        self.secret = secret
    }

    /// How the host records it once applied.
    public var applied: AppliedItem {
        AppliedItem(
            id: record.id, version: record.version, service: record.service, account: record.account,
            users: record.users, groups: record.groups, units: record.units)
    }
}

/// What a host must do to match a verified manifest.
public struct HostPlan {
    public var manifest: Manifest
    /// New items and higher versions, verified and decrypted.
    public var apply: [VerifiedItem] = []
    /// Items that left the manifest: revoke at once.
    public var remove: [AppliedItem] = []
    /// Entries refused (bad signature, rollback, missing record…); the host keeps what it had for them.
    public var errors: [String] = []
}

/// The checks of a host agent, without I/O: signatures against the pinned admin key,
/// seq and not-after of manifests, versions of items, and decryption.
public struct HostVerifier {
    public let host: String
    public let adminKey: [UInt8]
    public let keys: HostKeys

    public init(host: String, adminKey: [UInt8], keys: HostKeys) {
        self.host = host
        self.adminKey = adminKey
        self.keys = keys
    }

    /// The manifest, if it is the admin's, for this host, not older than the last one
    /// accepted (a replay) and not expired.
    public func manifest(_ bytes: [UInt8], state: HostState, now: Int64) throws(FleetError) -> Manifest {
        let manifest = try SignedRecord.decode(bytes, what: "manifest").verified(
            as: Manifest.self, kind: .manifest, publicKey: adminKey, what: "manifest")
        guard manifest.host == host else { throw .verification("manifest is for host \(manifest.host)") }
        guard manifest.seq >= state.seq else {
            throw .verification("manifest seq \(manifest.seq) is older than the applied \(state.seq) (replay)")
        }
        guard manifest.notAfter > now else { throw .verification("manifest seq \(manifest.seq) has expired") }
        return manifest
    }

    /// The entries of `manifest` this host does not serve yet at that version.
    public func wanted(_ manifest: Manifest, state: HostState) -> [ManifestEntry] {
        manifest.entries.filter { state.items[$0.id]?.version != $0.version }
    }

    /// Verifies the item records (`items[id]` for each wanted entry) and group keys
    /// (`groupKeys["group/epoch"]`), decrypts, and lists what to apply and remove.
    public func plan(
        _ manifest: Manifest, items: [String: [UInt8]], groupKeys: [String: [UInt8]], state: HostState
    ) -> HostPlan {
        var plan = HostPlan(manifest: manifest)
        let listed = Set(manifest.entries.map(\.id))
        plan.remove = state.items.values.filter { !listed.contains($0.id) }.sorted { $0.id < $1.id }
        for entry in wanted(manifest, state: state) {
            do {
                plan.apply.append(try verify(entry, items: items, groupKeys: groupKeys, state: state))
            } catch {
                plan.errors.append(error.description)
            }
        }
        return plan
    }

    /// The item record of `entry`, checked and decrypted.
    public func verify(
        _ entry: ManifestEntry, items: [String: [UInt8]], groupKeys: [String: [UInt8]], state: HostState
    ) throws(FleetError) -> VerifiedItem {
        let what = "item \(entry.id) v\(entry.version)"
        if let current = state.items[entry.id], current.version > entry.version {
            throw .verification("\(what): older than the applied v\(current.version) (rollback refused)")
        }
        guard let bytes = items[entry.id] else { throw .notFound(what) }
        let item = try SignedRecord.decode(bytes, what: what).verified(
            as: ItemRecord.self, kind: .item, publicKey: adminKey, what: what)
        guard item.id == entry.id, item.version == entry.version else {
            throw .verification("\(what): the record is item \(item.id) v\(item.version)")
        }
        let groupKeyName = "\(item.group)/\(item.epoch)"
        guard let sealed = groupKeys[groupKeyName] else { throw .notFound("\(what): group key \(groupKeyName)") }
        let record = try SignedRecord.decode(sealed, what: "group key \(groupKeyName)").verified(
            as: GroupKeyRecord.self, kind: .groupKey, publicKey: adminKey, what: "group key \(groupKeyName)")
        guard record.group == item.group, record.epoch == item.epoch, record.host == host else {
            throw .verification("group key \(groupKeyName): sealed for \(record.group)/\(record.epoch)/\(record.host)")
        }
        let groupKey = try ItemSealing.openGroupKey(record, keys: keys)
        return VerifiedItem(record: item, secret: try ItemSealing.open(item, groupKey: groupKey))
    }
}
