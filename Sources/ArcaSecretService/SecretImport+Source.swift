import ArcaCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// One item read from the source provider (the secret is fetched separately, in batches).
struct SourceItem {
    let path: String
    let label: String
    let attributes: [String: String]
}

/// A secret read from the source, with its content type.
struct SourceSecret {
    let value: SecretBytes
    let contentType: String
}

/// The source provider, spoken to through the Secret Service API itself (as any client).
struct SecretSource {
    let bus: BusConnection
    let name: String

    /// Long enough for a provider busy with a large collection.
    static let timeout: UInt64 = 60_000_000

    private func call(_ path: String, _ interface: String, _ member: String, _ values: [BusValue])
        throws(BusError) -> BusMessage
    {
        try bus.call(name, path, interface, member, values: values, timeout: Self.timeout)
    }

    /// Whether a connection owns the name now.
    func isRunning() throws(BusError) -> Bool {
        let reply = try bus.call(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", [name])
        return try reply.readBool()
    }

    /// The collection path for `--collection`: an object path as given, else an alias
    /// (`default`, `login`…), else a collection name. nil: no such collection.
    func collectionPath(_ collection: String?) throws(BusError) -> String? {
        let wanted = collection ?? "default"
        var path = wanted
        if !wanted.hasPrefix("/") {
            path = try call(SecretObject.base, Interfaces.service, "ReadAlias", [.string(wanted)]).readString("o")
            if path == "/", collection != nil { path = SecretObject.base + "/collection/" + wanted }
        }
        guard path != "/" else { return nil }
        // A missing collection answers no property.
        guard (try? property(path, Interfaces.collection, "Label")) != nil else { return nil }
        return path
    }

    /// A property's reply, positioned at the value inside its variant.
    func property(_ path: String, _ interface: String, _ property: String) throws(BusError) -> BusMessage {
        let reply = try call(path, Interfaces.properties, "Get", [.string(interface), .string(property)])
        guard let (_, contents) = try reply.peek(), try reply.enter("v", contents) else {
            throw BusError(call: "Get \(property)", errno: .badMessage, name: nil)
        }
        return reply
    }

    /// Unlocks `path` if it is locked, through the provider's prompt. Returns false if
    /// the prompt was dismissed (or the provider left before completing it).
    func unlock(_ path: String) throws(BusError) -> Bool {
        guard try property(path, Interfaces.collection, "Locked").readBool() else { return true }
        let reply = try call(SecretObject.base, Interfaces.service, "Unlock", [.paths([path])])
        let unlocked = try reply.readPaths()
        let prompt = try reply.readString("o")
        if prompt == "/" { return unlocked.contains(path) }
        var outcome: Bool?
        try bus.addMatch(
            "type='signal',sender='\(name)',interface='\(Interfaces.prompt)',member='Completed',path='\(prompt)'"
        ) { message in outcome = (try? message.readBool()).map { !$0 } ?? false }
        try bus.addMatch(
            "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        ) { _ in outcome = outcome ?? false }
        _ = try call(prompt, Interfaces.prompt, "Prompt", [.string("")])
        let wake = try WakeSignal()
        while outcome == nil {
            try bus.processAll()
            if outcome != nil { break }
            try bus.wait(orReadable: wake.fd)
        }
        return outcome ?? false
    }

    /// The collection's items.
    func items(in collection: String) throws(BusError) -> [String] {
        let reply = try property(collection, Interfaces.collection, "Items")
        return try reply.readPaths()
    }

    /// An item's label and attributes.
    func item(_ path: String) throws(BusError) -> SourceItem {
        let reply = try call(path, Interfaces.properties, "GetAll", [.string(Interfaces.item)])
        let properties = try reply.readProperties()
        guard case .string(let label)? = properties["Label"],
            case .stringDictionary(let attributes)? = properties["Attributes"]
        else { throw BusError(call: "GetAll \(path)", errno: .badMessage, name: nil) }
        return SourceItem(path: path, label: label, attributes: attributes)
    }

    /// A transfer session opened with the provider: its path, and the cipher of a
    /// `dh-ietf1024-sha256-aes128-cbc-pkcs7` one (nil: `plain`, used only when the
    /// provider does not support dh, as libsecret does).
    struct Session {
        let path: String
        let cipher: SessionCipher?
    }

    func openSession() throws(BusError) -> Session {
        let dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
        do {
            let pair = try DHKeyPair.generate()
            let reply = try call(
                SecretObject.base, Interfaces.service, "OpenSession", [.string(dh), .variant(.bytes(pair.publicKey))])
            guard try reply.enter("v", "ay") else { throw BusError(call: "OpenSession", errno: .badMessage, name: nil) }
            let theirs = try reply.readBytes()
            try reply.exit()
            let path = try reply.readString("o")
            let (_, cipher) = try DHSession.negotiate(clientPublicKey: theirs, pair: pair)
            return Session(path: path, cipher: cipher)
        } catch let error as BusError where error.name != "org.freedesktop.DBus.Error.NotSupported" {
            throw error
        } catch is BusError {
            // NotSupported: the provider has no dh; fall back to plain, as libsecret does.
        } catch {
            throw BusError(call: "OpenSession \(dh): \(error)", errno: .protocolError, name: nil)
        }
        let reply = try call(
            SecretObject.base, Interfaces.service, "OpenSession", [.string("plain"), .variant(.string(""))])
        try reply.skip("v")
        return Session(path: try reply.readString("o"), cipher: nil)
    }

    func closeSession(_ session: Session) {
        _ = try? call(session.path, Interfaces.session, "Close", [])
    }

    /// The secrets of `paths`, by path; items the provider leaves out (locked) are missing.
    func secrets(_ paths: [String], session: Session) throws(BusError) -> [String: SourceSecret] {
        let reply = try call(
            SecretObject.base, Interfaces.service, "GetSecrets", [.paths(paths), .objectPath(session.path)])
        var secrets: [String: SourceSecret] = [:]
        guard try reply.enter("a", "{o(oayays)}") else { return secrets }
        while try reply.enter("e", "o(oayays)") {
            let path = try reply.readString("o")
            guard try reply.enter("r", "oayays") else {
                throw BusError(call: "GetSecrets", errno: .badMessage, name: nil)
            }
            _ = try reply.readString("o")
            let parameters = try reply.readBytes()
            var value = try reply.readBytes()
            defer { for i in value.indices { value[i] = 0 } }
            let contentType = try reply.readString()
            try reply.exit()
            try reply.exit()
            let secret: SecretBytes
            do {
                if let cipher = session.cipher {
                    secret = try cipher.decrypt(iv: parameters, ciphertext: value)
                } else {
                    secret = try SecretBytes(consuming: &value)
                }
            } catch {
                throw BusError(
                    call: "GetSecrets: the secret of \(path) does not decrypt", errno: .protocolError, name: nil)
            }
            secrets[path] = SourceSecret(value: secret, contentType: contentType)
        }
        try reply.exit()
        return secrets
    }
}
