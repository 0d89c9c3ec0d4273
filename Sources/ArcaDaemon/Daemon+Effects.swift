import ArcaKeyring
import ArcaProtocol
import ArcaVault

/// The effects of the lock-state machine carried out: class keys dropped, rings
/// installed or removed in the kernel, held keys parked, events posted.
extension Daemon {
    /// Carries out lock-state effects on the kernel and the held keys, then parks
    /// what is held.
    func apply(_ effects: [LockEffect], to state: UserState, vault: Vault) {
        guard !effects.isEmpty else { return }
        // The items of every class to load are read first, in one read transaction (an
        // unlock loads two classes, ten queries), and no transaction is held while the
        // kernel work waits. Not when the effects also remove a class: a load after a
        // removal must read with the keys the removal left.
        let loads = effects.compactMap { effect -> KernelClass? in
            if case .load(let c) = effect { c } else { nil }
        }
        var gathered = loads.count == effects.count ? items(of: loads, vault: vault) : [:]
        for effect in effects {
            switch effect {
            case .load(let c):
                state.kernelNotRemoved.remove(c)
                if let items = gathered.removeValue(forKey: c) {
                    install(c, items: items, state: state)
                } else {
                    publish(c, state: state, vault: vault)
                }
            case .remove(let c):
                if !kernel.remove(uid: state.uid, class: c) { state.kernelNotRemoved.insert(c) }
                vault.lock(ItemMapping.vaultClasses(c))
                state.notInKernel[c] = nil
            }
        }
        kernel.park(uid: state.uid, keys: try? vault.exportHeldKeys())
        events.post(uid: state.uid, [.lockChanged(unlocked: loadedClasses(state))])
    }

    /// Puts every item of kernel class `c` into the user's ring; false if keys of the
    /// ring it replaces could not be destroyed.
    @discardableResult
    func publish(_ c: KernelClass, state: UserState, vault: Vault) -> Bool {
        install(c, items: items(of: [c], vault: vault)[c] ?? [], state: state)
    }

    /// Replaces the user's ring of `c` with `items`; false if keys of the old ring survive.
    @discardableResult
    private func install(_ c: KernelClass, items: [KeyringItem], state: UserState) -> Bool {
        let result = kernel.install(uid: state.uid, class: c, items: items)
        state.notInKernel[c] = result.notLoaded
        return !result.oldKeysRemain
    }

    /// The kernel items of `classes`, read in one read transaction (each query on its own
    /// if the transaction cannot begin or end).
    private func items(of classes: [KernelClass], vault: Vault) -> [KernelClass: [KeyringItem]] {
        var items: [KernelClass: [KeyringItem]] = [:]
        let collect = {
            items = [:]
            for c in classes { items[c] = Self.items(of: c, vault: vault) }
        }
        do { try vault.reading(collect) } catch { collect() }
        return items
    }

    /// Every item of kernel class `c` that belongs in the kernel, with its secret.
    private static func items(of c: KernelClass, vault: Vault) -> [KeyringItem] {
        var items: [KeyringItem] = []
        for accessibility in ItemMapping.vaultClasses(c) {
            for itemClass in ArcaVault.ItemClass.allCases {
                var filter = ItemAttributes()
                filter.accessible = accessibility
                let query = ArcaVault.Query(
                    itemClass, attributes: filter, synchronizable: .any, matchLimit: .all, returnData: true,
                    returnAttributes: true)
                guard let results = try? vault.copyMatching(query) else { continue }
                for result in results {
                    // Secret Service items are found by their attributes, which the kernel
                    // cannot search: arca-secretd reads them over the socket.
                    guard let attributes = result.attributes, let data = result.data,
                        attributes.accessGroup != AttributeItem.accessGroup
                    else { continue }
                    items.append(
                        KeyringItem(key: ItemMapping.keyringKey(attributes, itemClass: itemClass), secret: data))
                }
            }
        }
        return items
    }
}
