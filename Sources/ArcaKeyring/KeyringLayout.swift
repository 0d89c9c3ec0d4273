import ArcaCrypto

/// Arca's layout in the kernel keyring (ARCHITECTURE §6), for arcad, which runs
/// as root and is the only writer:
///
///     @u of user U
///      ├─ keyring "arca:wu"   root-owned, gid U, perm 0x0b3f0000   whenUnlocked items
///      └─ keyring "arca:afu"  root-owned, gid U, perm 0x0b3f0000   afterFirstUnlock items
///     persistent keyring of service uid S
///      └─ keyring "arca:svc"  root-owned, gid S, perm 0x0b3f0000   items granted to S
///
/// Every ring and key is made in the calling thread's keyring, which no other
/// thread or child can see, given its final permissions and owner tag there,
/// and only then linked where a reader can reach it: a key is never reachable
/// with the kernel's default permissions. A new ring is linked into place in one
/// call: a link displaces the keyring of the same type and description, so a
/// reader sees the old ring or the new one, never a half-filled one.
///
/// arcad owns what it makes: the serial of every ring and key is kept in a
/// ledger, and removal invalidates those serials (the kernel zeroes them at
/// once), never looking anything up through the user's own keyrings, and with
/// no child process. Linking a ring into `@u` takes a uid-switch child; with an
/// anchor (`init(budget:anchorIn:)`, as arcad runs it) only the first time for
/// each uid: the child also links `@u` into the anchor, through which the
/// publishing thread possesses it for one `keyctl_link` (`UserKeyringAnchor`).
/// Without the ledger (after a restart) the keys are found in `/proc/keys` by
/// owner (root) and group tag (the uid). Each uid has its own
/// lock; no lock is shared between uids. Calls are synchronous and must not be
/// spread over an `await`: staging happens in the thread's keyring.
public struct KeyringLayout: Sendable {
    /// Item keys: possessor view/read/search; owner (root) everything; nobody else anything.
    public static let itemPermissions: KeyPermissions = [.possessorView, .possessorRead, .possessorSearch, .userAll]
    /// Class rings: same mask, so a possessor can search and list but not change them.
    public static let ringPermissions: KeyPermissions = itemPermissions
    /// The kernel's limit for a `user` key's payload.
    public static let maximumPayload = 32_767
    /// The ring of items granted to a service uid, in its persistent keyring.
    public static let serviceRingDescription = "arca:svc"

    /// How much of root's quota each uid's rings may take.
    public let budget: KernelBudget
    let ledger = KeyLedger()
    /// Lets rings be linked into an anchored `@u` without the uid-switch child.
    let anchor: UserKeyringAnchor?

    /// A layout with an empty ledger (it learns what is in the kernel from `/proc/keys`).
    /// `anchorIn`: a keyring every thread of the process shares and no other process
    /// does (arcad's private session keyring), where the layout keeps its hold on the
    /// user keyrings it has published into (`UserKeyringAnchor`), so that only a uid's
    /// first ring needs the uid-switch child; nil: every ring needs it.
    public init(budget: KernelBudget = KernelBudget(), anchorIn place: KeySerial? = nil) {
        self.budget = budget
        anchor = place.map(UserKeyringAnchor.init(holderIn:))
    }

    /// Replaces user `uid`'s ring of class `class` by a new ring holding `items`.
    /// Items that cannot be loaded (too large, over budget) are reported, not
    /// thrown. If the new ring cannot be built or linked, the old ring is destroyed
    /// anyway (it no longer matches the vault) and the error is thrown: the caller
    /// serves the class from the socket.
    @discardableResult
    public func install(user uid: UInt32, class itemClass: KeyringClass, items: [KeyringItem]) throws(KeyringError)
        -> LoadReport
    {
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> LoadReport in
            let allowance = budget.allowance(used: user.cost(excluding: itemClass))
            let built: (ring: KeyLedger.Ring, report: LoadReport)
            do throws(KeyringError) {
                built = try buildRing(
                    description: itemClass.ringDescription, tag: uid, items: items, allowance: allowance)
            } catch {
                try retire(&user, uid: uid, class: itemClass, sparing: [])
                throw error
            }
            do throws(KeyringError) {
                try publish(built.ring.ring, into: &user, uid: uid)
            } catch {
                _ = destroy(built.ring.serials)
                try retire(&user, uid: uid, class: itemClass, sparing: [])
                throw error
            }
            try? built.ring.ring.unlink(from: .threadKeyring)
            defer { user.rings[itemClass] = built.ring }
            try retire(&user, uid: uid, class: itemClass, sparing: Set(built.ring.serials))
            return built.report
        }
    }

    /// Invalidates every key of class `class` of user `uid`, and the ring, by the
    /// serials this layout made (or, without them, found in `/proc/keys`); returns the
    /// number of item keys invalidated. Throws `.notDestroyed` if any key survived:
    /// a lock that did not remove everything is never reported as done.
    @discardableResult
    public func remove(user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError) -> Int {
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> Int in
            try retire(&user, uid: uid, class: itemClass, sparing: [])
        }
    }

    /// Adds (or replaces, by description) one item in user `uid`'s ring of class
    /// `class`, without rebuilding it: the cost of one write stays flat however many
    /// items the ring holds. The key gets its permissions before it is linked.
    public func put(item: KeyringItem, user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError)
        -> PutResult
    {
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> PutResult in
            guard var owned = user.rings[itemClass] else { return .noRing }
            let keyDescription = item.key.keyDescription
            let previous = owned.keys.removeValue(forKey: keyDescription)
            // The older version of the item leaves the kernel whatever happens next.
            let dropPrevious = { (owned: inout KeyLedger.Ring) throws(KeyringError) in
                try discard(previous, from: &owned)
            }
            if let reason = Self.unloadableReason(item, description: keyDescription) {
                try dropPrevious(&owned)
                user.rings[itemClass] = owned
                return .notLoaded(reason)
            }
            let cost = KeyCost.key(description: keyDescription, payload: item.secret.count)
            let used = user.cost() - (previous?.cost ?? KeyCost())
            guard budget.allowance(used: used).covers(cost) else {
                try dropPrevious(&owned)
                user.rings[itemClass] = owned
                return .notLoaded(.overBudget)
            }
            let key: KeySerial
            do throws(KeyringError) {
                key = try stagedKey(description: keyDescription, payload: item.secret, tag: uid)
            } catch {
                try dropPrevious(&owned)
                user.rings[itemClass] = owned
                if case .system(.quotaExceeded, _) = error { return .notLoaded(.quotaExceeded) }
                throw error
            }
            do throws(KeyringError) {
                // Displaces the older key of the same description from the ring.
                try mapped("keyctl_link(item)") { () throws(KeyringErrno) in try key.link(into: owned.ring) }
            } catch {
                _ = destroy([key])
                try dropPrevious(&owned)
                user.rings[itemClass] = owned
                throw error
            }
            try? key.unlink(from: .threadKeyring)
            try dropPrevious(&owned)
            owned.keys[keyDescription] = (key, cost)
            owned.cost += cost
            user.rings[itemClass] = owned
            return .placed
        }
    }

    /// Removes the key of one item (by its description) from user `uid`'s ring of class
    /// `class`, through the ledger, without touching the rest of the ring. `.noRing` when
    /// this layout made no ring of that class (an earlier arcad's keys are found only
    /// by `install`); throws `.notDestroyed` if the key survived (the ledger keeps it,
    /// so the next `install` or `remove` tries again).
    public func drop(_ key: KeyringItemKey, user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError)
        -> DropResult
    {
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> DropResult in
            guard var owned = user.rings[itemClass] else { return .noRing }
            guard let entry = owned.keys.removeValue(forKey: key.keyDescription) else { return .absent }
            try discard(entry, from: &owned)
            user.rings[itemClass] = owned
            return .dropped
        }
    }

    /// Whether user `uid`'s ring of class `class` holds a key for `key` (from the
    /// ledger, no syscall); nil when this layout made no ring of that class.
    public func holds(_ key: KeyringItemKey, user uid: UInt32, class itemClass: KeyringClass) -> Bool? {
        ledger.withUser(uid) { (user: inout KeyLedger.User) -> Bool? in
            user.rings[itemClass].map { $0.keys[key.keyDescription] != nil }
        }
    }

    /// The serial of user `uid`'s ring of class `class` as linked in `@u`, if any.
    /// For tests and diagnostics: arcad itself never looks its rings up there.
    public func ring(user uid: UInt32, class itemClass: KeyringClass) throws(KeyringError) -> KeySerial? {
        try UserKeyringSwitch.run(uid: uid, find: itemClass.ringDescription).found.map(KeySerial.init(rawValue:))
    }

    // MARK: - Internals

    /// Links `ring` into `@u` of `uid`: directly when this process already possesses
    /// that `@u` (`UserKeyringAnchor`), otherwise through the uid-switch child, which
    /// also anchors `@u` for the next time. A direct link that fails for any reason
    /// (the user invalidated or revoked `@u`, or took the possessor's write away)
    /// forgets the anchored serial and goes through the child, which decides.
    func publish(_ ring: KeySerial, into user: inout KeyLedger.User, uid: UInt32) throws(KeyringError) {
        let possessed = try? anchor?.possess()
        defer { if let possessed { anchor?.release(possession: possessed) } }
        if let home = user.userKeyring {
            if possessed != nil, UserKeyringAnchor.link(ring, into: home, owner: uid) { return }
            user.userKeyring = nil
        }
        user.childPublications += 1
        let outcome = try UserKeyringSwitch.run(uid: uid, find: nil, link: ring.rawValue, anchor: possessed)
        if outcome.anchored { user.userKeyring = KeySerial(rawValue: outcome.userKeyring) }
    }

    /// Destroys what `user` holds of `itemClass` (and any leftovers of earlier
    /// failures) except `sparing`; without a ledger entry, what `/proc/keys` shows.
    /// Returns the number of item keys destroyed.
    @discardableResult
    func retire(_ user: inout KeyLedger.User, uid: UInt32, class itemClass: KeyringClass, sparing: Set<KeySerial>)
        throws(KeyringError) -> Int
    {
        var rings: [KeySerial] = []
        var keys: [KeySerial] = user.leftovers
        if let owned = user.rings.removeValue(forKey: itemClass) {
            rings.append(owned.ring)
            keys.append(contentsOf: owned.keys.values.map(\.serial))
            // Keys linked into the ring by anyone else (nobody can: possessors lack link).
            keys.append(contentsOf: (try? owned.ring.links()) ?? [])
        }
        var scanError: KeyringError?
        if !user.scanned.contains(itemClass) {
            // Rings an earlier arcad made, which this ledger never saw.
            do throws(KeyringError) {
                let found = try KeyScan.orphans(uid: uid, ringDescription: itemClass.ringDescription)
                rings.append(contentsOf: found.rings)
                keys.append(contentsOf: found.keys)
                user.scanned.insert(itemClass)
            } catch {
                scanError = error
            }
        }
        let targets = (rings + keys).filter { !sparing.contains($0) }
        var failed = destroy(targets)
        if !failed.isEmpty, let found = try? KeyScan.orphans(uid: uid, ringDescription: itemClass.ringDescription) {
            // Second chance, through the fallback: whatever is still there by owner and tag.
            failed = destroy(Array(Set(failed).union(found.rings + found.keys).subtracting(sparing)))
        }
        user.leftovers = failed
        if !failed.isEmpty { throw KeyringError.notDestroyed(remaining: failed.count) }
        // What the ledger knew is gone, but without the scan nobody can say the rest is.
        if let scanError { throw scanError }
        return Set(targets).subtracting(rings).count
    }

    /// Destroys one item key of `owned` (already taken out of its key table) and takes
    /// its cost off the ring: the one way a single key leaves a ring (`put`, `drop`).
    func discard(_ entry: (serial: KeySerial, cost: KeyCost)?, from owned: inout KeyLedger.Ring)
        throws(KeyringError)
    {
        guard let entry else { return }
        owned.cost -= entry.cost
        if !destroy([entry.serial]).isEmpty { throw KeyringError.notDestroyed(remaining: 1) }
    }

    /// Invalidates each serial, rings first as listed; returns those still alive.
    /// A key already gone (ENOKEY, revoked, expired) counts as destroyed.
    func destroy(_ serials: [KeySerial]) -> [KeySerial] {
        var failed: [KeySerial] = []
        var seen = Set<KeySerial>()
        for serial in serials where seen.insert(serial).inserted {
            do throws(KeyringErrno) {
                try serial.invalidate()
            } catch {
                switch error {
                case .noKey, .keyRevoked, .keyExpired: break
                default: failed.append(serial)
                }
            }
        }
        return failed
    }

    /// A `user` key with its final permissions and owner tag, linked only into the
    /// thread keyring (possessed there, so root may set its attributes).
    func stagedKey(description: String, payload: SecretBytes, tag uid: UInt32) throws(KeyringError) -> KeySerial {
        let key = try mapped("add_key(item)") { () throws(KeyringErrno) in
            try KeySerial.add(type: "user", description: description, payload: payload, to: .threadKeyring)
        }
        do {
            try finish(key, permissions: Self.itemPermissions, tag: uid)
        } catch {
            _ = destroy([key])
            throw error
        }
        return key
    }

    func finish(_ key: KeySerial, permissions: KeyPermissions, tag uid: UInt32) throws(KeyringError) {
        try mapped("keyctl_chown(gid)") { () throws(KeyringErrno) in try key.changeOwner(uid: nil, gid: uid) }
        try mapped("keyctl_setperm") { () throws(KeyringErrno) in try key.setPermissions(permissions) }
    }

    /// Builds a ring holding what of `items` fits in `allowance`, linked only into the
    /// thread keyring; each key gets its permissions and tag while only this thread can
    /// reach it.
    func buildRing(description: String, tag uid: UInt32, items: [KeyringItem], allowance: KeyCost)
        throws(KeyringError) -> (ring: KeyLedger.Ring, report: LoadReport)
    {
        let ring = try mapped("add_key(keyring)") { () throws(KeyringErrno) in
            try KeySerial.add(type: "keyring", description: description, payload: nil, to: .threadKeyring)
        }
        var owned = KeyLedger.Ring(ring: ring, cost: KeyCost.key(description: description, payload: 0))
        do {
            try finish(ring, permissions: Self.ringPermissions, tag: uid)
        } catch {
            _ = destroy([ring])
            throw error
        }
        var report = LoadReport(loaded: 0, notLoaded: [], ring: ring)
        for item in items {
            let keyDescription = item.key.keyDescription
            if let reason = Self.unloadableReason(item, description: keyDescription) {
                report.notLoaded.append((item.key, reason))
                continue
            }
            guard owned.keys[keyDescription] == nil else {
                report.notLoaded.append((item.key, .duplicate))
                continue
            }
            let cost = KeyCost.key(description: keyDescription, payload: item.secret.count)
            guard allowance.covers(owned.cost + cost) else {
                report.notLoaded.append((item.key, .overBudget))
                continue
            }
            do throws(KeyringErrno) {
                // The ring is reachable from this thread only: adding straight into it
                // is as private as staging, and one call cheaper.
                let key = try KeySerial.add(type: "user", description: keyDescription, payload: item.secret, to: ring)
                owned.keys[keyDescription] = (key, cost)
                owned.cost += cost
                do throws(KeyringErrno) {
                    try key.changeOwner(uid: nil, gid: uid)
                    try key.setPermissions(Self.itemPermissions)
                } catch {
                    try? key.invalidate()
                    owned.keys[keyDescription] = nil
                    owned.cost -= cost
                    throw error
                }
                report.loaded += 1
            } catch {
                if error == .noKernelSupport {
                    _ = destroy(owned.serials)
                    throw KeyringError.noKernelSupport
                }
                report.notLoaded.append((item.key, error == .quotaExceeded ? .quotaExceeded : .kernel(error)))
            }
        }
        return (owned, report)
    }

    static func unloadableReason(_ item: KeyringItem, description: String) -> NotLoadedReason? {
        if item.secret.count > maximumPayload { return .payloadTooLarge(bytes: item.secret.count) }
        let length = description.utf8.count
        if length > KeyringItemKey.maximumDescriptionLength { return .descriptionTooLong(bytes: length) }
        return nil
    }
}
