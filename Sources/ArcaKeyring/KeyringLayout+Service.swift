import ArcaCrypto

/// Service grants and account deletion.
extension KeyringLayout {
    /// Replaces the items granted to service uid `uid` by `items`, in ring `arca:svc`
    /// of its persistent keyring; also restarts that keyring's expiry timer. Grants
    /// are the administrator's: they count against arcad's share of root's quota,
    /// not against a user budget.
    @discardableResult
    public func grant(uid: UInt32, items: [KeyringItem]) throws(KeyringError) -> LoadReport {
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> LoadReport in
            let persistent = try persistentKeyring(uid: uid)
            defer { try? persistent.unlink(from: .threadKeyring) }
            let old = try? persistent.search(type: "keyring", description: Self.serviceRingDescription)
            let unlimited = KernelBudget(
                keysPerUser: Int.max / 2, bytesPerUser: Int.max / 2,
                rootSharePercent: budget.rootSharePercent)
            let built = try buildRing(
                description: Self.serviceRingDescription, tag: uid, items: items,
                allowance: unlimited.allowance(used: KeyCost()))
            do throws(KeyringError) {
                try mapped("keyctl_link(persistent)") { () throws(KeyringErrno) in
                    try built.ring.ring.link(into: persistent)
                }
            } catch {
                _ = destroy(built.ring.serials)
                throw error
            }
            try? built.ring.ring.unlink(from: .threadKeyring)
            var previous = user.service?.serials ?? []
            if let old, old != built.ring.ring { previous += [old] + ((try? old.links()) ?? []) }
            user.leftovers += destroy(previous)
            user.service = built.ring
            return built.report
        }
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
        try ledger.withUser(uid) { (user: inout KeyLedger.User) throws(KeyringError) -> Int in
            var rings: [KeySerial] = []
            var keys: [KeySerial] = []
            if let owned = user.service {
                rings.append(owned.ring)
                keys += owned.keys.values.map(\.serial)
            }
            let persistent = try persistentKeyring(uid: uid)
            defer { try? persistent.unlink(from: .threadKeyring) }
            if let found = try? persistent.search(type: "keyring", description: Self.serviceRingDescription),
                let info = try? found.describe(), info.uid == 0
            {
                rings.append(found)
                keys += (try? found.links()) ?? []
            }
            user.service = nil
            let failed = destroy(rings + keys)
            if !failed.isEmpty {
                user.leftovers += failed
                throw KeyringError.notDestroyed(remaining: failed.count)
            }
            return Set(keys).subtracting(rings).count
        }
    }

    /// For a deleted account: destroys every ring and key arcad made for the uid (by
    /// serial, and whatever `/proc/keys` shows tagged with it), puts back the default
    /// permissions of its `@u` (a `keyctl setperm` the user made would otherwise
    /// outlive the account) and clears it, then invalidates it and the uid's `@us`
    /// (a recycled uid gets new ones, and the kernel's key tree, which its garbage
    /// collector walks on every invalidation, keeps nothing of a deleted account),
    /// and clears its persistent keyring, so a recycled uid inherits nothing. Reports
    /// what it really did.
    @discardableResult
    public func purge(user uid: UInt32) -> PurgeReport {
        ledger.withUser(uid) { (user: inout KeyLedger.User) -> PurgeReport in
            var report = PurgeReport()
            var targets: [KeySerial] = user.leftovers
            for owned in Array(user.rings.values) + (user.service.map { [$0] } ?? []) {
                targets += owned.serials
            }
            do {
                let tagged = try KeyScan.tagged(uid: uid)
                // Rings first, so a reader holding one gets ENOKEY rather than a shrinking list.
                targets += tagged.filter { $0.info.type == "keyring" }.map(\.serial)
                targets += tagged.flatMap { $0.info.type == "keyring" ? ((try? $0.serial.links()) ?? []) : [$0.serial] }
            } catch {
                report.failures.append("\(error)")
            }
            let failed = destroy(targets)
            report.destroyed = Set(targets).count - failed.count
            report.notDestroyed = failed.count
            if let home = user.userKeyring { anchor?.forget(home) }
            user = KeyLedger.User()
            user.leftovers = failed
            do {
                let outcome = try UserKeyringSwitch.run(uid: uid, find: nil, reset: true, clear: true, drop: true)
                report.userKeyringReset = true
                if !outcome.droppedUserKeyring || !outcome.droppedSessionKeyring {
                    let which = [outcome.droppedUserKeyring ? nil : "@u", outcome.droppedSessionKeyring ? nil : "@us"]
                    report.failures.append(
                        "not invalidated: \(which.compactMap { $0 }.joined(separator: ", ")): "
                            + "\(outcome.dropError.map { "\($0)" } ?? "?")")
                }
                if outcome.previousPermissions != UserKeyringSwitch.defaultUserKeyringPermissions {
                    report.changedPermissions = outcome.previousPermissions
                }
            } catch {
                report.failures.append("@u: \(error)")
            }
            do {
                let persistent = try persistentKeyring(uid: uid)
                try? persistent.clear()
                // Invalidate while we still possess it through the thread keyring.
                try? persistent.invalidate()
                try? persistent.unlink(from: .threadKeyring)
                report.persistentKeyringCleared = true
            } catch {
                report.failures.append("persistent keyring: \(error)")
            }
            return report
        }
    }

    func persistentKeyring(uid: UInt32) throws(KeyringError) -> KeySerial {
        try mapped("keyctl_get_persistent") { () throws(KeyringErrno) in
            try KeySerial.persistentKeyring(uid: uid, linkingInto: .threadKeyring)
        }
    }
}
