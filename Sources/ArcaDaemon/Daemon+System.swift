import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaVault

/// The system vault (ARCHITECTURE §8): root writes, granted principals read.
/// Every change re-delivers the grants to the kernel before the reply, so a
/// revoke or a delete has taken effect when the client hears "ok".
extension Daemon {
    // MARK: Items

    func systemAdd(_ request: AddRequest, peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        let attributes = try Self.systemAttributes(request.attributes, forWrite: true)
        guard request.itemClass == .genericPassword else {
            throw .param("the system vault holds generic passwords only")
        }
        let secret = try secretCopy(request.secret)
        return try system.withLock { state throws(HandlerError) -> Reply in
            let result: ItemResult
            do {
                result = try state.vault.add(.genericPassword, attributes: attributes, secret: secret)
            } catch {
                throw HandlerError.vault(error)
            }
            guard !request.returnFlags.isEmpty else { return .items([]) }
            return .items([systemResult(result, flags: request.returnFlags, secret: secret)])
        }
    }

    func systemCopyMatching(_ query: ArcaProtocol.Query, peer: PeerCredentials) throws(HandlerError) -> Reply {
        _ = try Self.systemAttributes(query.attributes, forWrite: false)
        var vaultQuery = try ItemMapping.query(query)
        let limit = vaultQuery.matchLimit
        // Filtering by grant needs every match and its attributes; the limit is applied after.
        vaultQuery.matchLimit = .all
        vaultQuery.returnAttributes = true
        // The groups the caller's process has (SO_PEERGROUPS), not those the group
        // database lists for its user: a process that dropped a group lost its grant.
        let groups = peer.isRoot ? [] : peer.allGroups
        return try system.withLock { state throws(HandlerError) -> Reply in
            let all: [ItemResult]
            do {
                all = try state.vault.copyMatching(vaultQuery)
            } catch {
                // A caller who may read nothing learns nothing about what exists.
                if !peer.isRoot { throw HandlerError(.itemNotFound, "no such item") }
                throw HandlerError.vault(error)
            }
            let readable = all.filter { result in
                peer.isRoot || Self.allows(GrantCodec.decode(result.attributes?.generic), uid: peer.uid, groups: groups)
            }
            guard !readable.isEmpty else { throw HandlerError(.itemNotFound, "no such item") }
            return .items(
                readable.prefix(limit.count).map { systemResult($0, flags: query.returnFlags, secret: $0.data) })
        }
    }

    func systemUpdate(_ request: UpdateRequest, peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        _ = try Self.systemAttributes(request.query.attributes, forWrite: false)
        let changes = try Self.systemAttributes(request.attributes, forWrite: true)
        var vaultQuery = try ItemMapping.query(request.query)
        vaultQuery.matchLimit = .all
        let secret = try request.secret.map { bytes throws(HandlerError) in try secretCopy(bytes) }
        return try system.withLock { state throws(HandlerError) -> Reply in
            do {
                _ = try state.vault.update(vaultQuery, changes: changes, secret: secret)
            } catch {
                throw HandlerError.vault(error)
            }
            deliverGrants(state)
            return .ok
        }
    }

    func systemDelete(_ query: ArcaProtocol.Query, peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        _ = try Self.systemAttributes(query.attributes, forWrite: false)
        var vaultQuery = try ItemMapping.query(query)
        vaultQuery.matchLimit = .all
        return try system.withLock { state throws(HandlerError) -> Reply in
            do {
                _ = try state.vault.delete(vaultQuery)
            } catch {
                throw HandlerError.vault(error)
            }
            deliverGrants(state)
            return .ok
        }
    }

    // MARK: Grants

    /// Adds (`adding`) or removes principals of every system item matching `query`;
    /// removing an empty list removes them all.
    func changeGrants(_ query: ArcaProtocol.Query, _ principals: [Principal], adding: Bool, peer: PeerCredentials)
        throws(HandlerError) -> Reply
    {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        _ = try Self.systemAttributes(query.attributes, forWrite: false)
        guard query.itemClass == .genericPassword else { throw HandlerError(.itemNotFound, "no such item") }
        for case .unit(let name, let credential) in principals {
            guard Self.isCredentialName(name), Self.isCredentialName(credential) else {
                throw .param("a unit name and a credential id are non-empty and contain no '/' or NUL")
            }
        }
        var vaultQuery = try ItemMapping.query(query)
        vaultQuery.matchLimit = .all
        vaultQuery.returnAttributes = true
        vaultQuery.returnPersistentReference = true
        return try system.withLock { state throws(HandlerError) -> Reply in
            do {
                try state.vault.batch {
                    for item in try state.vault.copyMatching(vaultQuery) {
                        guard let reference = item.persistentReference else { continue }
                        var current = GrantCodec.decode(item.attributes?.generic)
                        if adding {
                            for p in principals where !current.contains(p) { current.append(p) }
                        } else {
                            current = principals.isEmpty ? [] : current.filter { !principals.contains($0) }
                        }
                        var changes = ItemAttributes()
                        changes.generic = GrantCodec.encode(current)
                        _ = try state.vault.update(
                            ArcaVault.Query(.genericPassword, synchronizable: .any, persistentReference: reference),
                            changes: changes)
                    }
                }
            } catch {
                throw HandlerError.vault(error)
            }
            deliverGrants(state)
            return .ok
        }
    }

    func listGrants(peer: PeerCredentials) throws(HandlerError) -> Reply {
        guard peer.isRoot else { throw HandlerError.notAllowed }
        return try system.withLock { state throws(HandlerError) -> Reply in
            let entries = Self.everyItem(state.vault, data: false).compactMap { item -> GrantEntry? in
                let principals = GrantCodec.decode(item.attributes?.generic)
                guard !principals.isEmpty else { return nil }
                return GrantEntry(
                    service: item.attributes?.service, account: item.attributes?.account,
                    label: item.attributes?.label, principals: principals)
            }
            return .grants(entries)
        }
    }

    // MARK: Delivery

    /// Places each granted uid's items in its persistent keyring (one `arca:svc`
    /// ring, rebuilt whole), and revokes the ring of every uid no longer granted
    /// anything. Called with the system lock held, after every change and at start.
    func deliverGrants(_ state: SystemState) {
        var perUID: [UInt32: [KeyringItem]] = [:]
        for item in Self.everyItem(state.vault, data: true) {
            guard let attributes = item.attributes, let secret = item.data else { continue }
            let keyringItem = KeyringItem(
                key: ItemMapping.keyringKey(attributes, itemClass: .genericPassword), secret: secret)
            for uid in Self.grantedUIDs(GrantCodec.decode(attributes.generic)) {
                perUID[uid, default: []].append(keyringItem)
            }
        }
        for (uid, items) in perUID {
            let notLoaded = kernel.grantService(uid: uid, items: items)
            if notLoaded > 0 { Log.notice("uid \(uid): \(notLoaded) granted items stay socket-only") }
        }
        for uid in state.delivered.subtracting(perUID.keys) {
            kernel.revokeService(uid: uid)
            Log.info("uid \(uid): no system item granted any more; arca:svc revoked")
        }
        state.deliveredKeys = perUID.mapValues { Set($0.map(\.key.keyDescription)) }
    }

    /// The uids a grant list reaches: users, and the members of groups.
    static func grantedUIDs(_ principals: [Principal]) -> Set<UInt32> {
        var uids = Set<UInt32>()
        for p in principals {
            switch p {
            case .user(let uid): uids.insert(uid)
            case .group(let gid): uids.formUnion(Membership.members(ofGroup: gid))
            case .unit: continue
            }
        }
        return uids
    }

    /// Who should hold which key now (no secrets read), to compare with what was delivered.
    static func wantedKeys(_ vault: Vault) -> [UInt32: Set<String>] {
        var wanted: [UInt32: Set<String>] = [:]
        for item in everyItem(vault, data: false) {
            guard let attributes = item.attributes else { continue }
            let description = ItemMapping.keyringKey(attributes, itemClass: .genericPassword).keyDescription
            for uid in grantedUIDs(GrantCodec.decode(attributes.generic)) {
                wanted[uid, default: []].insert(description)
            }
        }
        return wanted
    }

    /// Delivers everything in system.db (at start: an arcad restart re-grants).
    public func deliverSystemGrants() {
        try? system.withLock { state throws(HandlerError) in deliverGrants(state) }
    }

    /// Restarts the expiry timer of every persistent keyring we deliver to; arcad
    /// calls it every `KeyringLayout.refreshInterval()` seconds. If a granted group
    /// gained or lost a member since the last delivery, delivers anew instead.
    public func refreshSystemGrants() {
        try? system.withLock { state throws(HandlerError) in
            if Self.wantedKeys(state.vault) != state.deliveredKeys {
                Log.info("group membership changed: delivering the system grants anew")
                deliverGrants(state)
                return
            }
            for uid in state.delivered { kernel.refreshService(uid: uid) }
        }
    }

    /// Seconds between two `refreshSystemGrants()`: half the kernel's
    /// persistent-keyring expiry (read at start), at most an hour.
    public static func systemRefreshInterval() -> Int {
        max(1, min((try? KeyringLayout.refreshInterval()) ?? 3600, 3600))
    }

    /// The secret granted to systemd unit `unit` under credential id `credential`, if any.
    func credential(unit: String, id credential: String) -> SecretBytes? {
        let wanted = Principal.unit(name: unit, credential: credential)
        return try? system.withLock { state throws(HandlerError) -> SecretBytes? in
            Self.everyItem(state.vault, data: true).first {
                GrantCodec.decode($0.attributes?.generic).contains(wanted)
            }?
            .data
        }
    }

    // MARK: Helpers

    static func everyItem(_ vault: Vault, data: Bool) -> [ItemResult] {
        let query = ArcaVault.Query(
            .genericPassword, synchronizable: .any, matchLimit: .all, returnData: data, returnAttributes: true)
        return (try? vault.copyMatching(query)) ?? []
    }

    static func allows(_ principals: [Principal], uid: UInt32, groups: Set<UInt32>) -> Bool {
        principals.contains { p in
            switch p {
            case .user(let granted): granted == uid
            case .group(let gid): groups.contains(gid)
            // Units are served by the credentials socket only: a unit's processes
            // have no identity on the request socket beyond their uid.
            case .unit: false
            }
        }
    }

    static func isCredentialName(_ s: String) -> Bool {
        !s.isEmpty && !s.utf8.contains(0) && !s.contains("/")
    }

    /// Wire attributes of a system request: `kSecAttrGeneric` holds the grants.
    static func systemAttributes(_ map: AttributeMap, forWrite: Bool) throws(HandlerError) -> ItemAttributes {
        guard map[.generic] == nil else { throw .param("kSecAttrGeneric is reserved for grants in the system vault") }
        return try ItemMapping.attributes(map, forWrite: forWrite)
    }

    /// `resultItem`, without the grant record (which a system item keeps in `generic`).
    func systemResult(_ result: ItemResult, flags: ReturnFlags, secret: SecretBytes?) -> ResultItem {
        var item = resultItem(result, flags: flags.subtracting(.attributes), secret: secret)
        if flags.contains(.attributes), var attributes = result.attributes {
            attributes.generic = nil
            item.attributes = ItemMapping.attributeMap(attributes, itemClass: result.itemClass)
        }
        return item
    }
}

extension ArcaVault.MatchLimit {
    var count: Int {
        switch self {
        case .one: 1
        case .all: Int.max
        case .count(let n): n
        }
    }
}
