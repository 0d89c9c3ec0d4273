import ArcaCrypto
import ArcaKeyring
import ArcaProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The item verbs: add, get, find/list, update, delete, clear.
extension Context {
    static let argvWarning =
        "arca: warning: a password on the command line can be read by other users (ps, /proc); pipe it on stdin"

    /// The secret of `source` in secure storage, warning when it came from argv.
    func readSecret(_ source: SecretSource, prompt: String, output: inout Output) throws(CLIError) -> SecretBytes {
        switch source {
        case .standardInput:
            return try input.secret(prompt: prompt, limit: ProtocolLimits.maximumSecretLength)
        case .commandLine(let text):
            output.errorLine(Self.argvWarning)
            var bytes = Array(text.utf8)
            do { return try SecretBytes(consuming: &bytes) } catch {
                throw .failure(what: "secret", why: "out of secure memory")
            }
        }
    }

    mutating func add(
        _ item: ItemSelection, secret source: SecretSource, replaceExisting: Bool, compatibility: Bool,
        output: inout Output
    ) throws(CLIError) {
        let what =
            compatibility
            ? (item.itemClass == .genericPassword ? "add-generic-password" : "add-internet-password") : "add"
        let secret = try readSecret(source, prompt: "secret: ", output: &output)
        var bytes = secret.withUnsafeBytes { Array($0) }
        defer { SecureWipe.zero(&bytes) }
        var request = Request.add(
            AddRequest(vault: .user(uid: uid), itemClass: item.itemClass, attributes: item.allAttributes, secret: bytes)
        )
        defer { request.wipeSecrets() }
        do {
            _ = try send(request, what: what)
        } catch CLIError.status(.duplicateItem, _, _) where replaceExisting {
            var update = Request.update(
                UpdateRequest(
                    vault: .user(uid: uid), query: Query(itemClass: item.itemClass, attributes: item.keyAttributes),
                    attributes: item.otherAttributes, secret: bytes))
            defer { update.wipeSecrets() }
            _ = try send(update, what: what)
        }
    }

    mutating func get(_ item: ItemSelection, useKernel: Bool, json: Bool, output: inout Output) throws(CLIError) {
        if useKernel, let secret = KeyringReader().readItem(named: item.allAttributes, itemClass: item.itemClass) {
            emit(secret: secret, json: json, output: &output)
            return
        }
        let query = Query(itemClass: item.itemClass, attributes: item.allAttributes, returnFlags: .data)
        emit(secret: try fetchSecret(from: .user(uid: uid), query), json: json, output: &output)
    }

    /// `get` through arcad: the one item's secret, moved into secure memory.
    mutating func fetchSecret(from vault: VaultID, _ query: Query) throws(CLIError) -> SecretBytes {
        var reply = try send(.copyMatching(vault: vault, query: query), what: "get")
        defer { reply.wipeSecrets() }
        guard case .items(let items) = reply, var data = items.first?.data else {
            throw .status(.itemNotFound, what: "get", detail: "")
        }
        do { return try SecretBytes(consuming: &data) } catch {
            throw .failure(what: "get", why: "out of secure memory")
        }
    }

    /// `get`'s output: the raw bytes (a newline only on a terminal), or `{"secret": …}`.
    func emit(secret: SecretBytes, json: Bool, output: inout Output) {
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            Self.writeSecret(secret, into: &writer)
            writer.endObject()
            writer.flush(into: &output)
            return
        }
        output.secret(secret)
        if output.standardOutputIsTerminal { output.standardOutput.append(0x0a) }
    }

    /// `"secret": "<UTF-8>"`, or `"secretBase64": "…"` when the bytes are not UTF-8.
    static func writeSecret(_ secret: SecretBytes, into writer: inout JSONWriter) {
        secret.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var iterator = bytes.makeIterator()
            var codec = UTF8()
            var valid = true
            decoding: while true {
                switch codec.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: break decoding
                case .error:
                    valid = false
                    break decoding
                }
            }
            if valid {
                writer.key("secret")
                writer.string(utf8: bytes)
            } else {
                writer.key("secretBase64")
                var encoded = Format.base64(bytes)
                writer.string(utf8: encoded)
                for index in encoded.indices { encoded[index] = 0 }
            }
        }
    }

    mutating func find(_ item: ItemSelection?, showSecrets: Bool, json: Bool, output: inout Output) throws(CLIError) {
        let what = item == nil ? "list" : "find"
        let flags: ReturnFlags = showSecrets ? [.attributes, .data, .persistentRef] : [.attributes, .persistentRef]
        var results: [(ItemClass, ResultItem)] = []
        defer {
            for index in results.indices { SecureWipe.zero(&results[index].1.data) }
        }
        let classes = item.map { [$0.itemClass] } ?? ItemClass.allCases
        for itemClass in classes {
            let query = Query(
                itemClass: itemClass, attributes: item?.allAttributes ?? [:], matchLimit: .all, returnFlags: flags)
            do {
                var reply = try send(.copyMatching(vault: .user(uid: uid), query: query), what: what)
                if case .items(let items) = reply { results += items.map { (itemClass, $0) } }
                reply.wipeSecrets()
            } catch CLIError.status(.itemNotFound, _, _) where item == nil {
                continue
            }
        }
        if item != nil, results.isEmpty { throw .status(.itemNotFound, what: what, detail: "") }
        let secretService = try secretServiceDetails(results.map(\.1), what: what)
        if json {
            var writer = JSONWriter()
            writer.beginArray()
            for (itemClass, result) in results {
                ItemFormat.json(
                    itemClass, result, secretService: result.persistentRef.flatMap { secretService[$0] },
                    into: &writer)
            }
            writer.endArray()
            writer.flush(into: &output)
            return
        }
        for (index, (itemClass, result)) in results.enumerated() {
            if index > 0 { output.line("") }
            ItemFormat.text(
                itemClass, result, secretService: result.persistentRef.flatMap { secretService[$0] }, into: &output)
        }
    }

    /// The Secret Service attributes and content type of the results that are
    /// `arca-secretd` items (in its reserved access group), by persistent reference.
    mutating func secretServiceDetails(_ results: [ResultItem], what: String) throws(CLIError)
        -> [[UInt8]: AttributeItemInfo]
    {
        let references = results.compactMap { result -> [UInt8]? in
            guard result.attributes[.accessGroup] == .string(ItemFormat.secretServiceGroup) else { return nil }
            return result.persistentRef
        }
        guard !references.isEmpty else { return [:] }
        let reply = try send(.getAttributeItems(uid: uid, references: references, returnSecrets: false), what: what)
        guard case .attributeItems(let list) = reply else { return [:] }
        return Dictionary(list.items.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
    }

    mutating func update(_ item: ItemSelection, secret source: SecretSource?, output: inout Output) throws(CLIError) {
        var bytes: [UInt8]?
        if let source {
            let secret = try readSecret(source, prompt: "new secret: ", output: &output)
            bytes = secret.withUnsafeBytes { Array($0) }
        }
        defer { SecureWipe.zero(&bytes) }
        var request = Request.update(
            UpdateRequest(
                vault: .user(uid: uid), query: Query(itemClass: item.itemClass, attributes: item.keyAttributes),
                attributes: item.otherAttributes, secret: bytes))
        defer { request.wipeSecrets() }
        _ = try send(request, what: "update")
    }

    mutating func delete(_ item: ItemSelection, compatibility: Bool, output: inout Output) throws(CLIError) {
        let what =
            compatibility
            ? (item.itemClass == .genericPassword ? "delete-generic-password" : "delete-internet-password") : "delete"
        let query = Query(itemClass: item.itemClass, attributes: item.allAttributes, matchLimit: .all)
        _ = try send(.delete(vault: .user(uid: uid), query: query), what: what)
        if compatibility { output.line("password has been deleted.") }
    }

    mutating func clear() throws(CLIError) {
        for itemClass in ItemClass.allCases {
            let query = Query(itemClass: itemClass, matchLimit: .all)
            do {
                _ = try send(.delete(vault: .user(uid: uid), query: query), what: "clear")
            } catch CLIError.status(.itemNotFound, _, _) {
                continue
            }
        }
    }

    mutating func compatibilityFind(
        _ item: ItemSelection, passwordOnly: Bool, passwordOnStderr: Bool, output: inout Output
    ) throws(CLIError) {
        let what = item.itemClass == .genericPassword ? "find-generic-password" : "find-internet-password"
        let flags: ReturnFlags = passwordOnly || passwordOnStderr ? [.attributes, .data] : [.attributes]
        let query = Query(itemClass: item.itemClass, attributes: item.allAttributes, returnFlags: flags)
        var reply = try send(.copyMatching(vault: .user(uid: uid), query: query), what: what)
        defer { reply.wipeSecrets() }
        guard case .items(let items) = reply, let result = items.first else {
            throw .status(.itemNotFound, what: what, detail: "")
        }
        if passwordOnly {
            output.standardOutput.append(contentsOf: result.data ?? [])
            output.standardOutput.append(0x0a)
            return
        }
        ItemFormat.security(item.itemClass, result, into: &output)
        if passwordOnStderr {
            output.standardError.append(contentsOf: Array("password: \"".utf8))
            output.standardError.append(contentsOf: result.data ?? [])
            output.standardError.append(contentsOf: Array("\"\n".utf8))
        }
    }
}
