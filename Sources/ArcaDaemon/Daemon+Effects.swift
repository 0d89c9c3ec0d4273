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
        for effect in effects {
            switch effect {
            case .load(let c):
                state.kernelNotRemoved.remove(c)
                publish(c, state: state, vault: vault)
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
        let result = kernel.install(uid: state.uid, class: c, items: items)
        state.notInKernel[c] = result.notLoaded
        return !result.oldKeysRemain
    }
}
