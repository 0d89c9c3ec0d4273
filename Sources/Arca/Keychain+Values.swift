import ArcaProtocol
import FoundationEssentials

/// Writing and reading values by key (the item's account).
extension Keychain {
    /// Stores `value`'s bytes under `key`, replacing the secret (and this
    /// keychain's label, comment and accessibility) of an existing item in place.
    public func set(_ value: Data, key: String) throws(KeychainError) {
        try set(bytes: [UInt8](value), key: key)
    }

    /// Stores `value` (UTF-8) under `key`.
    public func set(_ value: String, key: String) throws(KeychainError) {
        try set(bytes: Array(value.utf8), key: key)
    }

    /// Stores `value` under `key`.
    public func set(_ value: [UInt8], key: String) throws(KeychainError) {
        try set(bytes: value, key: key)
    }

    /// Stores `value` under `key`, as one byte (1 or 0).
    public func set(_ value: Bool, key: String) throws(KeychainError) {
        try set(bytes: [value ? 1 : 0], key: key)
    }

    /// Stores any `Encodable` value under `key`, encoded as JSON.
    public func set<Value: Encodable>(_ value: Value, key: String) throws(KeychainError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw KeychainError(code: .param, message: "cannot encode \(Value.self) as JSON")
        }
        try set(bytes: [UInt8](data), key: key)
    }

    /// The secret under `key` as UTF-8 text; `nil` when there is no such item.
    /// - Throws: ``KeychainError/Code/interactionNotAllowed`` when locked,
    ///   ``KeychainError/Code/decode`` when the secret is not UTF-8.
    public func get(_ key: String) throws(KeychainError) -> String? {
        guard let data = try getData(key) else { return nil }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw KeychainError(code: .decode, message: "the secret of \(key) is not UTF-8 text")
        }
        return text
    }

    /// The secret under `key`; `nil` when there is no such item.
    /// - Throws: ``KeychainError/Code/interactionNotAllowed`` when locked.
    public func getData(_ key: String) throws(KeychainError) -> Data? {
        try store.secret(query(key: key, returning: .data))?.data
    }

    /// The secret under `key` as bytes; `nil` when there is no such item.
    public func getBytes(_ key: String) throws(KeychainError) -> [UInt8]? {
        try getData(key).map { [UInt8]($0) }
    }

    /// A value stored with ``set(_:key:)-(Bool,_)``; `nil` when there is no such item.
    public func getBool(_ key: String) throws(KeychainError) -> Bool? {
        guard let data = try getData(key) else { return nil }
        switch [UInt8](data) {
        case [1]: return true
        case [0]: return false
        default: throw KeychainError(code: .decode, message: "the secret of \(key) is not a Bool")
        }
    }

    /// A `Decodable` value stored as JSON; `nil` when there is no such item.
    public func get<Value: Decodable>(_ key: String, as type: Value.Type) throws(KeychainError) -> Value? {
        guard let data = try getData(key) else { return nil }
        do {
            return try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw KeychainError(code: .decode, message: "the secret of \(key) is not a JSON \(Value.self)")
        }
    }

    /// Where `getData(key)` found the secret (kernel or arcad), with the secret.
    package func getDataWithSource(_ key: String) throws(KeychainError) -> (data: Data, source: ItemStore.Source)? {
        try store.secret(query(key: key, returning: .data))
    }

    /// Deletes the item under `key`; deleting a missing item succeeds.
    public func remove(_ key: String) throws(KeychainError) {
        do {
            try store.delete(query(key: key, limit: .all))
        } catch  where error.code == .itemNotFound {
            return
        }
    }

    /// Deletes every item of this keychain (its service or server, and its access group when set).
    public func removeAll() throws(KeychainError) {
        do {
            try store.delete(query(key: nil, limit: .all))
        } catch  where error.code == .itemNotFound {
            return
        }
    }

    /// Whether an item exists under `key`.
    /// - Throws: ``KeychainError/Code/interactionNotAllowed`` when locked.
    public func contains(_ key: String) throws(KeychainError) -> Bool {
        do {
            return try !store.copyMatching(query(key: key, returning: .attributes)).isEmpty
        } catch  where error.code == .itemNotFound {
            return false
        }
    }

    /// The text under `key`, or `nil` when absent. Assigning `nil` removes it.
    ///
    /// A subscript cannot throw on assignment, so this one reports every
    /// failure — a locked vault included — as `nil` and drops failed writes.
    /// Use ``get(_:)`` and ``set(_:key:)-(String,_)`` where "locked" must not
    /// look like "absent".
    public subscript(key: String) -> String? {
        get { (try? get(key)) ?? nil }
        nonmutating set { _ = try? (newValue.map { v throws(KeychainError) in try set(v, key: key) } ?? remove(key)) }
    }

    /// The secret under `key` as bytes; see ``subscript(_:)`` for errors.
    public subscript(data key: String) -> Data? {
        get { (try? getData(key)) ?? nil }
        nonmutating set { _ = try? (newValue.map { v throws(KeychainError) in try set(v, key: key) } ?? remove(key)) }
    }

    /// A Bool under `key`; see ``subscript(_:)`` for errors.
    public subscript(bool key: String) -> Bool? {
        get { (try? getBool(key)) ?? nil }
        nonmutating set { _ = try? (newValue.map { v throws(KeychainError) in try set(v, key: key) } ?? remove(key)) }
    }

    /// Add, or on a duplicate update in place. Retried once if the item vanishes
    /// between the two (another process deleted it).
    private func set(bytes: [UInt8], key: String) throws(KeychainError) {
        var attributes = selector(key: key)
        attributes.merge(writtenAttributes) { _, new in new }
        for _ in 0..<2 {
            do {
                _ = try store.add(wireClass, attributes: attributes, secret: bytes)
                return
            } catch  where error.code == .duplicateItem {
                do {
                    try store.update(query(key: key), attributes: writtenAttributes, secret: bytes)
                    return
                } catch  where error.code == .itemNotFound {
                    continue
                }
            }
        }
        throw KeychainError(code: .duplicateItem, message: "the item under \(key) kept changing; try again")
    }
}
