import ArcaCrypto
import Synchronization

/// Arca's layout in the kernel keyring (ARCHITECTURE §6), for arcad, which runs
/// as root and is the only writer:
///
///     @u of user U
///      ├─ keyring "arca:wu"   root-owned, perm 0x0b3f0000   whenUnlocked items
///      └─ keyring "arca:afu"  root-owned, perm 0x0b3f0000   afterFirstUnlock items
///     persistent keyring of service uid S
///      └─ keyring "arca:svc"  root-owned, perm 0x0b3f0000   items granted to S
///
/// Rings are built complete off to the side (in the calling thread's keyring,
/// which no other thread or child can see) and then linked into place in one
/// call: a link displaces the keyring of the same type and description, so a
/// reader sees the old ring or the new one, never a half-filled one. The old
/// ring and every key in it are then invalidated, which the kernel zeroes at
/// once; timeouts are never relied on. Calls are synchronous and must not be
/// spread over an `await`: the staging ring lives in the thread's keyring.
/// Writers in one process are serialized by a process-wide lock, so that two
/// installs of the same ring cannot both displace the same old one.
public struct KeyringLayout: Sendable {
    private static let writer = Mutex(())

    /// Item keys: possessor view/read/search; owner (root) everything; nobody else anything.
    public static let itemPermissions: UInt32 = 0x0b3f_0000
    /// Class rings: same mask, so a possessor can search and list but not change them.
    public static let ringPermissions: UInt32 = 0x0b3f_0000
    /// The kernel's limit for a `user` key's payload.
    public static let maximumPayload = 32_767
    /// The ring of items granted to a service uid, in its persistent keyring.
    public static let serviceRingDescription = "arca:svc"

    /// A layout handle; it holds no state, the kernel does.
    public init() {}

    /// Replaces user `uid`'s ring of class `class` by a new ring holding `items`.
    /// Items that cannot be loaded are reported, not thrown; an error is thrown only
    /// if the ring itself cannot be built or linked, in which case nothing changed.
    @discardableResult
    public func install(user uid: UInt32, class itemClass: KeyringClass, items: [KeyringItem]) throws(KeyringError)
        -> LoadReport
    {
        try Self.writer.withLock { _ throws(KeyringError) in try installLocked(user: uid, class: itemClass, items: items) }
    }

    private func installLocked(user uid: UInt32, class itemClass: KeyringClass, items: [KeyringItem])
        throws(KeyringError) -> LoadReport
    {
        let built = try buildRing(description: itemClass.ringDescription, items: items)
        let outcome: UserKeyringSwitch.Outcome
        do {
            outcome = try UserKeyringSwitch.run(uid: uid, find: itemClass.ringDescription, link: built.ring.rawValue)
        } catch {
            _ = retire(built.ring, expecting: itemClass.ringDescription)
            throw error
        }
        try? built.ring.unlink(from: .threadKeyring)
        if let old = outcome.found, old != built.ring.rawValue {
            _ = retire(KeySerial(rawValue: old), expecting: itemClass.ringDescription)
        }
        return built
    }

    /// Invalidates every key of class `class` of user `uid`, and the ring; returns
    /// the number of item keys invalidated (0 if the class was not loaded).
    @discardableResult
    public func remove(user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError) -> Int {
        try Self.writer.withLock { _ throws(KeyringError) in try removeLocked(user: uid, class: itemClass) }
    }

    private func removeLocked(user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError) -> Int {
        guard let found = try ring(user: uid, class: itemClass) else { return 0 }
        return retire(found, expecting: itemClass.ringDescription)
    }

    /// Adds (or replaces, by description) one item in an installed ring, without
    /// rebuilding it: the cost of one write stays flat however many items the ring
    /// holds. Returns why the item could not be loaded, or nil when it was.
    @discardableResult
    public func put(item: KeyringItem, into ring: KeySerial) throws(KeyringError) -> NotLoadedReason? {
        try Self.writer.withLock { _ throws(KeyringError) -> NotLoadedReason? in
            let keyDescription = item.key.keyDescription
            if let reason = Self.unloadableReason(item, description: keyDescription) { return reason }
            do throws(KeyringErrno) {
                // A new key starts with the default permissions, which give its owner
                // (root) no setattr: only a possessor may set them. Linking the ring into
                // the thread keyring for the duration makes it and its keys possessed.
                try ring.link(into: .threadKeyring)
                defer { try? ring.unlink(from: .threadKeyring) }
                let key = try KeySerial.add(type: "user", description: keyDescription, payload: item.secret, to: ring)
                try key.setPermissions(Self.itemPermissions)
                return nil
            } catch {
                switch error {
                case .noKernelSupport: throw KeyringError.noKernelSupport
                case .quotaExceeded: return .quotaExceeded
                default: throw KeyringError.system(error, operation: "add_key(item)")
                }
            }
        }
    }

    /// The serial of user `uid`'s ring of class `class`, if it is loaded.
    public func ring(user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError) -> KeySerial? {
        try UserKeyringSwitch.run(uid: uid, find: itemClass.ringDescription).found.map(KeySerial.init(rawValue:))
    }

    /// Replaces the items granted to service uid `uid` by `items`, in ring `arca:svc`
    /// of its persistent keyring; also restarts that keyring's expiry timer.
    @discardableResult
    public func grant(uid: UInt32, items: [KeyringItem]) throws(KeyringError) -> LoadReport {
        try Self.writer.withLock { _ throws(KeyringError) in try grantLocked(uid: uid, items: items) }
    }

    private func grantLocked(uid: UInt32, items: [KeyringItem]) throws(KeyringError) -> LoadReport {
        let persistent = try persistentKeyring(uid: uid)
        defer { try? persistent.unlink(from: .threadKeyring) }
        let old = try? persistent.search(type: "keyring", description: Self.serviceRingDescription)
        let built = try buildRing(description: Self.serviceRingDescription, items: items)
        do {
            try mapped("keyctl_link(persistent)") { () throws(KeyringErrno) in try built.ring.link(into: persistent) }
        } catch {
            _ = retire(built.ring, expecting: Self.serviceRingDescription)
            throw error
        }
        try? built.ring.unlink(from: .threadKeyring)
        if let old, old != built.ring { _ = retire(old, expecting: Self.serviceRingDescription) }
        return built
    }

    /// Restarts the expiry timer of service uid `uid`'s persistent keyring; call it
    /// well inside `KeyQuota.persistentKeyringExpiry()` (arcad uses half of it).
    public func refresh(uid: UInt32) throws(KeyringError) {
        let persistent = try persistentKeyring(uid: uid)
        try? persistent.unlink(from: .threadKeyring)
    }

    /// How often to call `refresh(uid:)`: half the kernel's persistent-keyring expiry, in seconds.
    public static func refreshInterval() throws(KeyringError) -> Int {
        max(1, try KeyQuota.persistentKeyringExpiry() / 2)
    }

    /// Invalidates everything granted to service uid `uid`; returns the number of item keys.
    @discardableResult
    public func revoke(uid: UInt32) throws(KeyringError) -> Int {
        try Self.writer.withLock { _ throws(KeyringError) in try revokeLocked(uid: uid) }
    }

    private func revokeLocked(uid: UInt32) throws(KeyringError) -> Int {
        let persistent = try persistentKeyring(uid: uid)
        defer { try? persistent.unlink(from: .threadKeyring) }
        guard let ring = try? persistent.search(type: "keyring", description: Self.serviceRingDescription) else {
            return 0
        }
        return retire(ring, expecting: Self.serviceRingDescription)
    }

    /// For a deleted account: invalidates both class rings and the service ring, then
    /// clears the uid's `@u` and persistent keyring, so a recycled uid inherits nothing.
    public func purge(user uid: UInt32) throws(KeyringError) {
        try Self.writer.withLock { _ throws(KeyringError) in
            for itemClass in KeyringClass.allCases { _ = try removeLocked(user: uid, class: itemClass) }
            _ = try UserKeyringSwitch.run(uid: uid, find: nil, clear: true)
            _ = try revokeLocked(uid: uid)
            let persistent = try persistentKeyring(uid: uid)
            try? persistent.clear()
            // Invalidate while we still possess it through the thread keyring.
            try? persistent.invalidate()
            try? persistent.unlink(from: .threadKeyring)
        }
    }

    // MARK: - Internals

    private func persistentKeyring(uid: UInt32) throws(KeyringError) -> KeySerial {
        try mapped("keyctl_get_persistent") { () throws(KeyringErrno) in
            try KeySerial.persistentKeyring(uid: uid, linkingInto: .threadKeyring)
        }
    }

    /// Builds a ring holding `items`, linked only into the thread keyring.
    private func buildRing(description: String, items: [KeyringItem]) throws(KeyringError) -> LoadReport {
        let ring = try mapped("add_key(keyring)") { () throws(KeyringErrno) in
            try KeySerial.add(type: "keyring", description: description, payload: nil, to: .threadKeyring)
        }
        do {
            try mapped("keyctl_setperm(ring)") { () throws(KeyringErrno) in
                try ring.setPermissions(Self.ringPermissions)
            }
        } catch {
            _ = retire(ring, expecting: description)
            throw error
        }
        var report = LoadReport(loaded: 0, notLoaded: [], ring: ring)
        var seen = Set<String>(minimumCapacity: items.count)
        for item in items {
            let keyDescription = item.key.keyDescription
            if let reason = Self.unloadableReason(item, description: keyDescription) {
                report.notLoaded.append((item.key, reason))
                continue
            }
            guard seen.insert(keyDescription).inserted else {
                report.notLoaded.append((item.key, .duplicate))
                continue
            }
            do throws(KeyringErrno) {
                let key = try KeySerial.add(type: "user", description: keyDescription, payload: item.secret, to: ring)
                do throws(KeyringErrno) {
                    try key.setPermissions(Self.itemPermissions)
                } catch {
                    try? key.invalidate()
                    throw error
                }
                report.loaded += 1
            } catch {
                if error == .noKernelSupport {
                    _ = retire(ring, expecting: description)
                    throw KeyringError.noKernelSupport
                }
                report.notLoaded.append((item.key, error == .quotaExceeded ? .quotaExceeded : .kernel(error)))
            }
        }
        return report
    }

    private static func unloadableReason(_ item: KeyringItem, description: String) -> NotLoadedReason? {
        if item.secret.count > maximumPayload { return .payloadTooLarge(bytes: item.secret.count) }
        let length = description.utf8.count
        if length > KeyringItemKey.maximumDescriptionLength { return .descriptionTooLong(bytes: length) }
        return nil
    }

    /// Invalidates a root-owned ring of ours and every key it holds: first the ring,
    /// so that a reader holding its serial gets ENOKEY rather than a shrinking list,
    /// then the keys. A keyring that is not ours (another owner, type or
    /// description) is left alone. Returns the number of keys invalidated.
    private func retire(_ ring: KeySerial, expecting description: String) -> Int {
        guard let info = try? ring.describe(), info.type == "keyring", info.uid == 0,
            info.description == description
        else { return 0 }
        let keys = (try? ring.links()) ?? []
        try? ring.invalidate()
        var count = 0
        for key in keys {
            do throws(KeyringErrno) {
                try key.invalidate()
                count += 1
            } catch {
                // Already gone (ENOKEY) or not ours: nothing to wipe.
            }
        }
        return count
    }
}
