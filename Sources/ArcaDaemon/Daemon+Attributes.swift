import ArcaCrypto
import ArcaProtocol
import ArcaVault

/// Secret Service attribute items (the requests of `arca-secretd`) over a user's
/// vault. Like every item request, a user acts only on their own vault. Each
/// change is posted to the user's event stream, so every listener hears of it.
extension Daemon {
    func addAttributeItem(_ request: AttributeItemAdd, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: request.uid)
        let secret = try secretCopy(request.secret)
        // A burst of adds (CreateItem from several clients) shares one commit; each
        // reply still waits for the commit that holds its item.
        return try groupCommit(uid: request.uid) { _, vault throws(HandlerError) in
            try self.requireVaultRoom(request.uid)
            let added: (item: AttributeItem, replaced: Bool)
            do {
                added = try vault.addAttributeItem(
                    label: request.label, attributes: request.attributes, contentType: request.contentType,
                    secret: secret, accessible: request.accessible ?? self.config.secretServiceClass,
                    replace: request.replace)
            } catch {
                throw HandlerError.vault(error)
            }
            let reference = added.item.reference.bytes
            return (
                .attributeItems(AttributeItemList(items: [Self.info(added.item)])),
                [added.replaced ? .itemChanged(reference: reference) : .itemAdded(reference: reference)]
            )
        }
    }

    func searchAttributeItems(uid: UInt32, _ attributes: SecretAttributes, returnSecrets: Bool, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                let found = try vault.searchAttributeItems(attributes, returnSecrets: returnSecrets)
                return .attributeItems(
                    AttributeItemList(items: found.unlocked.map(Self.info), locked: found.locked.map(\.bytes)))
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }

    func searchAttributeReferences(uid: UInt32, _ attributes: SecretAttributes, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                let found = try vault.searchAttributeReferences(attributes)
                return .attributeReferences(
                    AttributeReferenceList(unlocked: found.unlocked.map(\.bytes), locked: found.locked.map(\.bytes)))
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }

    /// The login collection's label (renamed first when `label` is given) and the class of new items.
    func collectionSettings(uid: UInt32, label: String?, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                if let label { try vault.setCollectionLabel(label) }
                return .collectionSettings(
                    CollectionSettings(label: try vault.collectionLabel(), accessible: config.secretServiceClass))
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }

    func getAttributeItems(uid: UInt32, _ references: [[UInt8]], returnSecrets: Bool, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        try authorize(peer, for: uid)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            var items: [AttributeItemInfo] = []
            var locked: [[UInt8]] = []
            for bytes in references {
                // A reference of the wrong shape names no item: left out, like an unknown one.
                guard let reference = try? PersistentReference(bytes: bytes) else { continue }
                do {
                    items.append(Self.info(try vault.attributeItem(reference, returnSecret: returnSecrets)))
                } catch VaultError.locked {
                    locked.append(bytes)
                } catch VaultError.itemNotFound {
                    continue
                } catch {
                    throw HandlerError.vault(error)
                }
            }
            return .attributeItems(AttributeItemList(items: items, locked: locked))
        }
    }

    func updateAttributeItem(_ request: AttributeItemUpdate, peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: request.uid)
        let reference = try Self.reference(request.reference)
        let secret = try request.secret.map { bytes throws(HandlerError) in try secretCopy(bytes) }
        return try context(request.uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            try requireVaultRoom(request.uid)
            do {
                let item = try vault.updateAttributeItem(
                    reference, label: request.label, attributes: request.attributes, contentType: request.contentType,
                    secret: secret)
                events.post(uid: state.uid, [.itemChanged(reference: request.reference)])
                return .attributeItems(AttributeItemList(items: [Self.info(item)]))
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }

    func deleteAttributeItem(uid: UInt32, _ bytes: [UInt8], peer: PeerCredentials) throws(HandlerError) -> Reply {
        try authorize(peer, for: uid)
        let reference = try Self.reference(bytes)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                try vault.deleteAttributeItem(reference)
            } catch {
                throw HandlerError.vault(error)
            }
            events.post(uid: state.uid, [.itemDeleted(reference: bytes)])
            return .ok
        }
    }

    /// Blocks this connection's thread until an event of `uid` after `after`, or the timeout.
    func waitEvents(uid: UInt32, after: UInt64, milliseconds: UInt32, peer: PeerCredentials) throws(HandlerError)
        -> Reply
    {
        try authorize(peer, for: uid)
        let wait = min(milliseconds, ProtocolLimits.maximumEventWaitMilliseconds)
        return .events(events.wait(uid: uid, after: after, milliseconds: wait))
    }

    /// The lock classes whose keys the user's state machine holds.
    func loadedClasses(_ state: UserState) -> LockClasses {
        var unlocked: LockClasses = []
        for c in state.lock.loadedClasses { unlocked.insert(c == .whenUnlocked ? .whenUnlocked : .afterFirstUnlock) }
        return unlocked
    }

    private static func reference(_ bytes: [UInt8]) throws(HandlerError) -> PersistentReference {
        do { return try PersistentReference(bytes: bytes) } catch {
            throw HandlerError(.itemNotFound, VaultError.itemNotFound.description)
        }
    }

    /// An item for the wire; the secret, when read, is copied out for the reply
    /// (which the server zeroes after sending).
    static func info(_ item: AttributeItem) -> AttributeItemInfo {
        AttributeItemInfo(
            reference: item.reference.bytes, label: item.label, attributes: item.attributes,
            contentType: item.contentType, created: micros(item.created), modified: micros(item.modified),
            accessible: item.accessible, secret: item.secret.map { $0.withUnsafeBytes { Array($0) } })
    }

    private static func micros(_ seconds: Double) -> Int64 { Int64((seconds * 1e6).rounded()) }
}
