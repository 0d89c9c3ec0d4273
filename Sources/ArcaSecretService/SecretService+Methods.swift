import ArcaCrypto
import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// A secret as a client sent it: decrypted, with its content type.
struct IncomingSecret {
    let value: SecretBytes
    let contentType: String
}

/// The methods of Service, Collection, Item and Prompt.
extension SecretService {
    // MARK: Sessions

    func openSession(algorithm: String, input: ReadValue, caller: String) throws -> [BusValue] {
        let id = newNumber()
        switch algorithm {
        case "plain":
            sessions[id] = TransferSession(owner: caller, cipher: nil)
            return [.variant(.string("")), .objectPath(SecretObject.session(id).path)]
        case "dh-ietf1024-sha256-aes128-cbc-pkcs7":
            guard case .bytes(let clientKey) = input else {
                throw SecretError.invalidArgs("the input of dh-ietf1024-sha256-aes128-cbc-pkcs7 is a byte array")
            }
            do {
                let pair = try spareKey ?? DHKeyPair.generate()
                spareKey = nil  // the loop makes the next one once idle
                let (ours, cipher) = try DHSession.negotiate(clientPublicKey: clientKey, pair: pair)
                sessions[id] = TransferSession(owner: caller, cipher: cipher)
                return [.variant(.bytes(ours)), .objectPath(SecretObject.session(id).path)]
            } catch SessionCryptoError.badPublicKey(let why) {
                throw SecretError.invalidArgs(why)
            }
        default:
            throw SecretError.notSupported(
                "algorithm \(algorithm) is not supported; use plain or dh-ietf1024-sha256-aes128-cbc-pkcs7")
        }
    }

    /// The caller's own session at `path`; anyone else's → NoSession.
    func session(_ path: String, caller: String) throws -> (id: String, session: TransferSession) {
        guard case .session(let id)? = SecretObject(path: path), let s = sessions[id], s.owner == caller else {
            throw SecretError.noSession
        }
        return (id, s)
    }

    /// Reads a `(oayays)` and decrypts it with the caller's session.
    func readSecret(_ m: BusMessage, caller: String) throws -> IncomingSecret {
        guard try m.enter("r", "oayays") else { throw SecretError.invalidArgs("expected a secret (oayays)") }
        let sessionPath = try m.readString("o")
        let parameters = try m.readBytes()
        var value = try m.readBytes()
        defer { for i in value.indices { value[i] = 0 } }
        let contentType = try m.readString()
        try m.exit()
        let (_, s) = try session(sessionPath, caller: caller)
        if let cipher = s.cipher {
            do {
                let plain = try cipher.decrypt(iv: parameters, ciphertext: value)
                return IncomingSecret(value: plain, contentType: contentType)
            } catch {
                throw SecretError.invalidArgs("the secret does not decrypt with this session: \(error)")
            }
        }
        return IncomingSecret(value: try SecretBytes(consuming: &value), contentType: contentType)
    }

    /// A secret for the caller's session, as `(oayays)`.
    func encode(_ secret: SecretBytes, contentType: String, session path: String, caller: String) throws -> BusValue {
        let (_, s) = try session(path, caller: caller)
        var parameters: [UInt8] = []
        var value: [UInt8]
        if let cipher = s.cipher {
            (parameters, value) = try cipher.encrypt(secret)
        } else {
            value = secret.withUnsafeBytes { Array($0) }
        }
        return .structure([.objectPath(path), .bytes(parameters), .bytes(value), .string(contentType)])
    }

    // MARK: Search, lock, unlock

    /// Paths of matching items: (unlocked, locked). Nothing held in the vault → IsLocked.
    func search(_ attributes: [String: String], in collections: [CollectionID]) throws -> ([String], [String]) {
        var unlockedPaths: [String] = []
        var lockedPaths: [String] = []
        for c in collections {
            switch c {
            case .login:
                let list = try arcad.references(attributes)
                uncachedFound.removeAll(keepingCapacity: true)
                for ref in list.unlocked {
                    let id = ReferenceText.encode(ref)
                    if cache[id] == nil { uncachedFound.insert(id) }
                    unlockedPaths.append(CollectionID.login.path + "/" + id)
                }
                lockedPaths += list.locked.map { itemPath($0) }
                if list.unlocked.count + list.locked.count > 1000 { trimHeap = true }
            case .session:
                unlockedPaths += memoryItems.keys.sorted { Int($0) ?? 0 < Int($1) ?? 0 }.filter { id in
                    guard let have = memoryItems[id]?.attributes else { return false }
                    return attributes.allSatisfy { have[$0.key] == $0.value }
                }.map { SecretObject.item(.session, $0).path }
            }
        }
        return (unlockedPaths, lockedPaths)
    }

    /// Whether a login object is locked now.
    func isLocked(_ object: SecretObject) throws -> Bool {
        switch object {
        case .collection(.login): return loginLocked
        case .item(.login, let id):
            guard let ref = ReferenceText.decode(id) else { return false }
            let list = try arcad.items(.getAttributeItems(uid: arcad.uid, references: [ref], returnSecrets: false))
            return !list.locked.isEmpty
        default: return false
        }
    }

    func unlock(_ paths: [String], caller: String) throws -> [BusValue] {
        unlocked = arcad.unlockedClasses()
        var done: [String] = []
        var pending: [String] = []
        for path in paths {
            guard let object = SecretObject(path: path), try exists(object, caller: caller) else { continue }
            if try isLocked(object) { pending.append(path) } else { done.append(path) }
        }
        guard !pending.isEmpty else { return [.paths(done), .objectPath("/")] }
        let id = newNumber()
        prompts[id] = PendingPrompt(owner: caller, unlock: pending)
        return [.paths(done), .objectPath(SecretObject.prompt(id).path)]
    }

    func lock(_ paths: [String]) throws -> [BusValue] {
        let login = paths.filter {
            guard let o = SecretObject(path: $0) else { return false }
            if case .collection(.login) = o { return true }
            if case .item(.login, _) = o { return true }
            return false
        }
        if !login.isEmpty {
            _ = try arcad.send(.lock(uid: arcad.uid, classes: .all))
            unlocked = []
        }
        return [.paths(login), .objectPath("/")]
    }

    /// Dismiss(): a prompt not yet run, or one the system prompter is showing.
    func dismissPrompt(_ id: String, caller: String) throws {
        if dismissFlow(prompt: id, caller: caller) { return }
        guard let prompt = prompts[id], prompt.owner == caller else { throw SecretError.noSuchObject }
        prompts[id] = nil
        complete(SecretObject.prompt(id).path, caller: caller, dismissed: true, [])
    }

    // MARK: Secrets

    func getSecrets(_ paths: [String], session: String, caller: String) throws -> BusValue {
        _ = try self.session(session, caller: caller)
        var entries: [BusValue] = []
        var refs: [[UInt8]] = []
        for path in paths {
            switch SecretObject(path: path) {
            case .item(.session, let id)?:
                if let item = memoryItems[id] {
                    entries.append(
                        .entry(
                            .objectPath(path),
                            try encode(
                                item.secret, contentType: item.contentType, session: session, caller: caller)))
                }
            case .item(.login, let id)?:
                if let ref = ReferenceText.decode(id) { refs.append(ref) }
            default: continue
            }
        }
        if !refs.isEmpty {
            var list = try arcad.items(.getAttributeItems(uid: arcad.uid, references: refs, returnSecrets: true))
            defer { for i in list.items.indices { SecureWipe.zero(&list.items[i].secret) } }
            for i in list.items.indices {
                let item = list.items[i]
                let secret = try takeSecret(&list.items[i])
                entries.append(
                    .entry(
                        .objectPath(itemPath(item.reference)),
                        try encode(
                            secret, contentType: item.contentType, session: session, caller: caller)))
            }
        }
        return .array(elementSignature: "{o(oayays)}", entries)
    }

    /// GetSecret on a session item (login items: `queueSecretRead`).
    func sessionSecret(_ id: String, session: String, caller: String) throws -> BusValue {
        _ = try self.session(session, caller: caller)
        guard let item = memoryItems[id] else { throw SecretError.noSuchObject }
        return try encode(item.secret, contentType: item.contentType, session: session, caller: caller)
    }

    /// Moves an item's secret bytes into secure memory, zeroing the reply's copy.
    private func takeSecret(_ item: inout AttributeItemInfo) throws -> SecretBytes {
        guard var bytes = item.secret else { throw SecretError.noSuchObject }
        item.secret = nil  // `bytes` is now the only owner, zeroed in place by consuming
        return try SecretBytes(consuming: &bytes)
    }

    // MARK: Items

    /// CreateItem on the in-memory session collection (login items: `queueCreate`).
    func createSessionItem(_ properties: [String: ReadValue], _ secret: IncomingSecret, replace: Bool) -> String {
        let (label, attributes) = Self.labelAndAttributes(properties)
        let now = UInt64(time(nil))
        if replace, let existing = memoryItems.first(where: { $0.value.attributes == attributes })?.key {
            memoryItems[existing]?.label = label
            memoryItems[existing]?.secret = secret.value
            memoryItems[existing]?.contentType = secret.contentType
            memoryItems[existing]?.modified = now
            let path = SecretObject.item(.session, existing).path
            bus.emit(CollectionID.session.path, Interfaces.collection, "ItemChanged", [.objectPath(path)])
            return path
        }
        let id = newNumber()
        memoryItems[id] = MemoryItem(
            label: label, attributes: attributes, secret: secret.value, contentType: secret.contentType,
            created: now, modified: now)
        let path = SecretObject.item(.session, id).path
        bus.emit(CollectionID.session.path, Interfaces.collection, "ItemCreated", [.objectPath(path)])
        return path
    }

    func deleteItem(_ c: CollectionID, _ id: String) throws {
        switch c {
        case .session:
            memoryItems[id] = nil
            bus.emit(
                CollectionID.session.path, Interfaces.collection, "ItemDeleted",
                [.objectPath(SecretObject.item(.session, id).path)])
        case .login:
            guard let ref = ReferenceText.decode(id) else { throw SecretError.noSuchObject }
            cache[id] = nil
            _ = try arcad.send(.deleteAttributeItem(uid: arcad.uid, reference: ref))
        }
    }

    func setSecret(_ c: CollectionID, _ id: String, _ secret: IncomingSecret) throws {
        switch c {
        case .session:
            memoryItems[id]?.secret = secret.value
            memoryItems[id]?.contentType = secret.contentType
            memoryItems[id]?.modified = UInt64(time(nil))
        case .login:
            guard let ref = ReferenceText.decode(id) else { throw SecretError.noSuchObject }
            var bytes = secret.value.withUnsafeBytes { Array($0) }
            defer { SecureWipe.zero(&bytes) }
            cache[id] = nil
            _ = try arcad.send(
                .updateAttributeItem(
                    AttributeItemUpdate(
                        uid: arcad.uid, reference: ref, contentType: secret.contentType, secret: bytes)))
        }
    }
}
