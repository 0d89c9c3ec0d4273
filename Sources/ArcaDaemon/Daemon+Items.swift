import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaVault

/// SecItemAdd / CopyMatching / Update / Delete over a user's vault, keeping the
/// kernel rings of loaded classes in step with every write.
extension Daemon {
    func add(_ request: AddRequest, peer: PeerCredentials) throws(HandlerError) -> Reply {
        if request.vault == .system { return try systemAdd(request, peer: peer) }
        let uid = try userVault(request.vault, peer: peer)
        let attributes = try ItemMapping.attributes(request.attributes, forWrite: true)
        let itemClass = request.itemClass
        let secret = try secretCopy(request.secret)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            try requireVaultRoom(uid)
            let result: ItemResult
            do {
                result = try vault.add(itemClass, attributes: attributes, secret: secret)
            } catch {
                throw HandlerError.vault(error)
            }
            let kernelClass = ItemMapping.kernelClass(attributes.accessible ?? .whenUnlocked)
            if state.lock.loadedClasses.contains(kernelClass) {
                let item = KeyringItem(key: ItemMapping.keyringKey(attributes, itemClass: itemClass), secret: secret)
                switch kernel.put(uid: uid, class: kernelClass, item: item) {
                case .placed: break
                case .notLoadable: state.notInKernel[kernelClass, default: 0] += 1
                case .reinstall:
                    if !publish(kernelClass, state: state, vault: vault) {
                        throw HandlerError(.internalComponent, "the old ring could not be replaced; see arcad's log")
                    }
                }
            }
            if let reference = result.persistentReference {
                events.post(uid: uid, [.itemAdded(reference: reference.bytes)])
            }
            guard !request.returnFlags.isEmpty else { return .items([]) }
            return .items([resultItem(result, flags: request.returnFlags, secret: secret)])
        }
    }

    func copyMatching(vault target: VaultID, query: ArcaProtocol.Query, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        if target == .system { return try systemCopyMatching(query, peer: peer) }
        let uid = try userVault(target, peer: peer)
        let vaultQuery = try ItemMapping.query(query)
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            do {
                let results = try vault.copyMatching(vaultQuery)
                return .items(results.map { resultItem($0, flags: query.returnFlags, secret: $0.data) })
            } catch {
                throw HandlerError.vault(error)
            }
        }
    }

    func update(_ request: UpdateRequest, peer: PeerCredentials) throws(HandlerError) -> Reply {
        if request.vault == .system { return try systemUpdate(request, peer: peer) }
        let uid = try userVault(request.vault, peer: peer)
        var vaultQuery = try ItemMapping.query(request.query)
        // SecItemUpdate changes every match, whatever the query's limit says.
        vaultQuery.matchLimit = .all
        let changes = try ItemMapping.attributes(request.attributes, forWrite: true)
        let secret = try request.secret.map { bytes throws(HandlerError) in try secretCopy(bytes) }
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            try requireVaultRoom(uid)
            let changed: [ItemChange]
            do {
                changed = try vault.update(vaultQuery, changes: changes, secret: secret) { old, new in
                    needsSecret(old, new, itemClass: vaultQuery.itemClass, state: state)
                }
            } catch {
                throw HandlerError.vault(error)
            }
            events.post(uid: uid, [.itemsChanged])
            try reflect(changed, state: state, vault: vault)
            return .ok
        }
    }

    func delete(vault target: VaultID, query: ArcaProtocol.Query, peer: PeerCredentials) throws(HandlerError) -> Reply {
        if target == .system { return try systemDelete(query, peer: peer) }
        let uid = try userVault(target, peer: peer)
        var vaultQuery = try ItemMapping.query(query)
        vaultQuery.matchLimit = .all
        return try context(uid).withLock { state throws(HandlerError) -> Reply in
            let vault = try requireVault(of: state)
            let deleted: [ItemChange]
            do {
                deleted = try vault.deleteReporting(vaultQuery)
            } catch {
                throw HandlerError.vault(error)
            }
            events.post(uid: uid, [.itemsChanged])
            try reflect(deleted, state: state, vault: vault)
            return .ok
        }
    }

    // MARK: Helpers

    /// The uid whose vault a request names, after authorization.
    func userVault(_ vault: VaultID, peer: PeerCredentials) throws(HandlerError) -> UInt32 {
        switch vault {
        case .user(let uid):
            try authorize(peer, for: uid)
            return uid
        case .system:
            // Requests on the system vault are routed to Daemon+System before this.
            throw HandlerError(.param, "the system vault has no user")
        }
    }

    func resultItem(_ result: ItemResult, flags: ReturnFlags, secret: SecretBytes?) -> ResultItem {
        var item = ResultItem()
        if flags.contains(.attributes), let attributes = result.attributes {
            item.attributes = ItemMapping.attributeMap(attributes, itemClass: result.itemClass)
        }
        if flags.contains(.data), let secret {
            // The wire needs plain bytes; the server zeroes the reply after sending it.
            item.data = secret.withUnsafeBytes { Array($0) }
        }
        if flags.contains(.persistentRef), let reference = result.persistentReference {
            item.persistentRef = reference.bytes
        }
        return item
    }

    func secretCopy(_ bytes: [UInt8]) throws(HandlerError) -> SecretBytes {
        do {
            return try bytes.withUnsafeBytes { try SecretBytes(copying: $0) }
        } catch {
            throw HandlerError(.notAvailable, "out of locked memory")
        }
    }
}
