import ArcaKeyring
import ArcaVault

/// An update, delete, merged sync record or restored item mirrored in the kernel one
/// key at a time: the cost of a one-item write stays flat however many items the vault
/// holds (a whole ring is rebuilt only when the kernel asks for it, or for a write that
/// changed many of its items).
extension Daemon {
    /// Above this many changed items in one ring, rebuilding that ring is cheaper than
    /// one kernel call per item.
    static let perItemKernelLimit = 64

    /// Whether an item lives in the kernel at all: Secret Service items are found by
    /// their attributes, which the kernel cannot search (as in `publish`).
    static func inKernel(_ a: ItemAttributes) -> Bool { a.accessGroup != AttributeItem.accessGroup }

    /// Where an item lives in the kernel: its ring and key; nil for a Secret Service
    /// item or none at all.
    static func slot(_ a: ItemAttributes?, itemClass: ItemClass) -> (ring: KernelClass, key: KeyringItemKey)? {
        guard let a, inKernel(a) else { return nil }
        return (ItemMapping.kernelClass(a.accessible ?? .whenUnlocked), ItemMapping.keyringKey(a, itemClass: itemClass))
    }

    /// Whether arcad needs the kept secret of an item an update changes without
    /// setting the secret: only when the item gets a new key in a loaded ring.
    func needsSecret(_ old: ItemAttributes, _ new: ItemAttributes, itemClass: ItemClass, state: UserState) -> Bool {
        guard let to = Self.slot(new, itemClass: itemClass), state.lock.loadedClasses.contains(to.ring) else {
            return false
        }
        guard let from = Self.slot(old, itemClass: itemClass) else { return true }
        return from.ring != to.ring || from.key != to.key
    }

    /// Carries `changes` (in the vault's order) into the loaded rings and keeps
    /// `notInKernel` in step: every write path (requests, sync merges, restores) comes
    /// here. A key that could not be destroyed makes the write fail (it is done in the
    /// vault), as a ring that could not be replaced does.
    func reflect(_ changes: [ItemChange], state: UserState, vault: Vault) throws(HandlerError) {
        let loaded = Set(state.lock.loadedClasses)
        // Per ring: a batch of 10,000 incoming records rebuilds the ring they fill, while
        // the one item it moved into the other ring is still a single put there.
        var touched: [KernelClass: Int] = [:]
        for change in changes {
            let rings = Set([change.old, change.new].compactMap { Self.slot($0, itemClass: change.itemClass)?.ring })
            for ring in rings { touched[ring, default: 0] += 1 }
        }
        var rebuild = Set(touched.filter { $0.value > Self.perItemKernelLimit }.keys)
        let perItem = loaded.subtracting(rebuild)
        var oldKeysRemain = false
        if !perItem.isDisjoint(with: touched.keys) {
            for change in changes where !reflect(change, state: state, loaded: perItem, rebuild: &rebuild) {
                oldKeysRemain = true
            }
        }
        for c in rebuild.intersection(loaded) where !publish(c, state: state, vault: vault) { oldKeysRemain = true }
        guard !oldKeysRemain else {
            throw HandlerError(
                .internalComponent,
                "the vault changed, but the old version may still be in the kernel; see arcad's log")
        }
    }

    /// One item: its old key dropped and its new one put, or only the secret replaced
    /// when the key stays; false if the old key survived. `loaded` leaves out the rings
    /// that are rebuilt whole.
    private func reflect(
        _ change: ItemChange, state: UserState, loaded: Set<KernelClass>, rebuild: inout Set<KernelClass>
    ) -> Bool {
        let old = Self.slot(change.old, itemClass: change.itemClass)
        let new = Self.slot(change.new, itemClass: change.itemClass)
        // Was the item counted as socket-only before, and is it after?
        var wasCounted = false
        var isCounted = false
        var intact = true
        if let old, let new, old.ring == new.ring, old.key == new.key {
            // Same key: the kernel holds the right thing unless the secret changed.
            guard change.secretChanged, loaded.contains(new.ring) else { return true }
            wasCounted = kernel.holds(uid: state.uid, class: new.ring, key: new.key) == false
        } else if let old, loaded.contains(old.ring) {
            switch kernel.drop(uid: state.uid, class: old.ring, key: old.key) {
            case .dropped: break
            case .absent: wasCounted = true
            case .reinstall: rebuild.insert(old.ring)
            case .failed: intact = false
            }
        }
        if let new, loaded.contains(new.ring) {
            if let secret = change.secret {
                switch kernel.put(uid: state.uid, class: new.ring, item: KeyringItem(key: new.key, secret: secret)) {
                case .placed: break
                case .notLoadable: isCounted = true
                case .reinstall: rebuild.insert(new.ring)
                }
            } else {
                // The vault was not asked for the secret (needsSecret said no): rebuild.
                rebuild.insert(new.ring)
            }
        }
        if wasCounted, let c = old?.ring, let count = state.notInKernel[c], count > 0 {
            state.notInKernel[c] = count - 1
        }
        if isCounted, let c = new?.ring { state.notInKernel[c, default: 0] += 1 }
        return intact
    }
}
