import ArcaKeyring
import ArcaVault

/// An update or delete mirrored in the kernel one key at a time: the cost of a
/// one-item write stays flat however many items the vault holds (a whole ring is
/// rebuilt only when the kernel asks for it, or for a write that matched many items).
extension Daemon {
    /// Above this many changed items, rebuilding the touched rings is cheaper than
    /// one kernel call per item.
    static let perItemKernelLimit = 64

    /// Whether an item lives in the kernel at all: Secret Service items are found by
    /// their attributes, which the kernel cannot search (as in `publish`).
    static func inKernel(_ a: ItemAttributes) -> Bool { a.accessGroup != AttributeItem.accessGroup }

    /// Whether arcad needs the kept secret of an item an update changes without
    /// setting the secret: only when the item gets a new key in a loaded ring.
    func needsSecret(_ old: ItemAttributes, _ new: ItemAttributes, itemClass: ItemClass, state: UserState) -> Bool {
        guard Self.inKernel(new) else { return false }
        let newClass = ItemMapping.kernelClass(new.accessible ?? .whenUnlocked)
        guard state.lock.loadedClasses.contains(newClass) else { return false }
        return !Self.inKernel(old) || ItemMapping.kernelClass(old.accessible ?? .whenUnlocked) != newClass
            || ItemMapping.keyringKey(old, itemClass: itemClass) != ItemMapping.keyringKey(new, itemClass: itemClass)
    }

    /// Carries `changes` into the loaded rings and keeps `notInKernel` in step. A key
    /// that could not be destroyed makes the write fail (it is done in the vault), as
    /// a ring that could not be replaced does.
    func reflect(_ changes: [ItemChange], state: UserState, vault: Vault) throws(HandlerError) {
        let loaded = Set(state.lock.loadedClasses)
        var rebuild: Set<KernelClass> = []
        var oldKeysRemain = false
        if changes.count > Self.perItemKernelLimit {
            for change in changes {
                for a in [change.old] + (change.new.map { [$0] } ?? []) where Self.inKernel(a) {
                    rebuild.insert(ItemMapping.kernelClass(a.accessible ?? .whenUnlocked))
                }
            }
        } else {
            for change in changes where !reflect(change, state: state, loaded: loaded, rebuild: &rebuild) {
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
    /// when the key stays; false if the old key survived.
    private func reflect(
        _ change: ItemChange, state: UserState, loaded: Set<KernelClass>, rebuild: inout Set<KernelClass>
    ) -> Bool {
        let uid = state.uid
        let old = Self.inKernel(change.old)
            ? (ItemMapping.kernelClass(change.old.accessible ?? .whenUnlocked),
                ItemMapping.keyringKey(change.old, itemClass: change.itemClass)) : nil
        let new = change.new.flatMap { a in
            Self.inKernel(a)
                ? (ItemMapping.kernelClass(a.accessible ?? .whenUnlocked),
                    ItemMapping.keyringKey(a, itemClass: change.itemClass)) : nil
        }
        // Was the item counted as socket-only before, and is it after?
        var wasCounted = false
        var isCounted = false
        if let old, let new, old.0 == new.0, old.1 == new.1 {
            // Same key: the kernel holds the right thing unless the secret changed.
            guard change.secretChanged, loaded.contains(new.0), let secret = change.secret else { return true }
            wasCounted = kernel.holds(uid: uid, class: new.0, key: new.1) == false
            switch kernel.put(uid: uid, class: new.0, item: KeyringItem(key: new.1, secret: secret)) {
            case .placed: break
            case .notLoadable: isCounted = true
            case .reinstall: rebuild.insert(new.0)
            }
            adjustNotInKernel(state, old: wasCounted ? new.0 : nil, new: isCounted ? new.0 : nil)
            return true
        }
        var intact = true
        if let old, loaded.contains(old.0) {
            switch kernel.drop(uid: uid, class: old.0, key: old.1) {
            case .dropped: break
            case .absent: wasCounted = true
            case .reinstall: rebuild.insert(old.0)
            case .failed: intact = false
            }
        }
        if let new, loaded.contains(new.0) {
            if let secret = change.secret {
                switch kernel.put(uid: uid, class: new.0, item: KeyringItem(key: new.1, secret: secret)) {
                case .placed: break
                case .notLoadable: isCounted = true
                case .reinstall: rebuild.insert(new.0)
                }
            } else {
                // The vault was not asked for the secret (cannot happen with needsSecret): rebuild.
                rebuild.insert(new.0)
            }
        }
        adjustNotInKernel(state, old: wasCounted ? old?.0 : nil, new: isCounted ? new?.0 : nil)
        return intact
    }

    private func adjustNotInKernel(_ state: UserState, old: KernelClass?, new: KernelClass?) {
        if let old, let count = state.notInKernel[old], count > 0 { state.notInKernel[old] = count - 1 }
        if let new { state.notInKernel[new, default: 0] += 1 }
    }
}
