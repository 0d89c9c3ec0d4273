import ArcaProtocol

/// Adds an item to the caller's vault, as on Apple platforms.
///
/// `attributes` holds `kSecClass`, the attributes, `kSecValueData` and
/// optionally `kSecReturn…` keys; `result` then receives what was asked for,
/// shaped as by ``SecItemCopyMatching(_:_:)``.
/// - Returns: `errSecSuccess`, `errSecDuplicateItem`, `errSecInteractionNotAllowed`
///   (locked), `errSecNotAvailable` (arcad not running), `errSecParam`…
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCalls.run(result) { () throws(SecItemCalls.Failure) -> CFTypeRef? in
        let parsed = try SecItemCalls.parse(attributes)
        guard let itemClass = parsed.itemClass else { throw .param("kSecClass is missing") }
        guard parsed.persistentRef == nil, !parsed.synchronizableAny, parsed.matchLimit == nil else {
            throw .param("SecItemAdd takes no persistent reference, match limit or kSecAttrSynchronizableAny")
        }
        let items = try SecItemCalls.keychain { store throws(KeychainError) in
            try store.add(
                itemClass, attributes: parsed.attributes, secret: parsed.valueData ?? [],
                returnFlags: parsed.returnFlags)
        }
        return SecItemResults.object(items, flags: parsed.returnFlags, limit: .one)
    }
}

/// Finds items of the caller's vault, as on Apple platforms.
///
/// The result is shaped as on Apple platforms: `Data` (an `NSData`) for
/// `kSecReturnData` or `kSecReturnPersistentRef` alone, an attribute dictionary
/// (`NSDictionary`, with `kSecValueData`/`kSecValuePersistentRef` when asked
/// for) otherwise, an array of those for `kSecMatchLimitAll`, nothing when no
/// `kSecReturn…` key is set. A single secret asked for by its primary key is
/// read from the kernel keyring when there.
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecInteractionNotAllowed`
///   (locked, never reported as not found), `errSecNotAvailable`, `errSecParam`…
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCalls.run(result) { () throws(SecItemCalls.Failure) -> CFTypeRef? in
        let q = try SecItemCalls.query(try SecItemCalls.parse(query), defaultLimit: .one)
        if ItemStore.kernelKey(for: q) != nil {
            let found = try SecItemCalls.keychain { store throws(KeychainError) in try store.secret(q) }
            guard let found else { throw .status(errSecItemNotFound) }
            return NSData(data: found.data)
        }
        let items = try SecItemCalls.keychain { store throws(KeychainError) in try store.copyMatching(q) }
        return SecItemResults.object(items, flags: q.returnFlags, limit: q.matchLimit)
    }
}

/// Changes every item matching `query`: the attributes in `attributesToUpdate`
/// and, with `kSecValueData` there, the secret.
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecDuplicateItem` (a
///   primary key would collide), `errSecInteractionNotAllowed`, `errSecParam`…
@discardableResult
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemCalls.run(nil) { () throws(SecItemCalls.Failure) -> CFTypeRef? in
        var q = try SecItemCalls.query(try SecItemCalls.parse(query), defaultLimit: .all)
        q.returnFlags = []
        let changes = try SecItemCalls.parse(attributesToUpdate)
        guard changes.itemClass == nil || changes.itemClass == q.itemClass, changes.persistentRef == nil,
            changes.returnFlags.isEmpty, changes.matchLimit == nil, !changes.synchronizableAny
        else { throw .param("attributesToUpdate may hold only attributes and kSecValueData") }
        try SecItemCalls.keychain { store throws(KeychainError) in
            try store.update(q, attributes: changes.attributes, secret: changes.valueData)
        }
        return nil
    }
}

/// Deletes every item matching `query`.
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecInteractionNotAllowed`, `errSecParam`…
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemCalls.run(nil) { () throws(SecItemCalls.Failure) -> CFTypeRef? in
        var q = try SecItemCalls.query(try SecItemCalls.parse(query), defaultLimit: .all)
        q.returnFlags = []
        q.matchLimit = .all
        try SecItemCalls.keychain { store throws(KeychainError) in try store.delete(q) }
        return nil
    }
}

/// A human-readable message for a status code, as on Apple platforms
/// (`SecCopyErrorMessageString(status, nil) as String?`). `reserved` must be `nil`.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    NSString(string: KeychainError.standardMessage(for: status))
}

/// The plumbing shared by the four `SecItem…` functions.
enum SecItemCalls {
    /// A failed call: its status (with a message only for diagnosis).
    enum Failure: Error {
        case status(OSStatus)
        case param(String)
    }

    /// Runs a call, stores its result (or nil) and returns its status.
    static func run(
        _ result: UnsafeMutablePointer<CFTypeRef?>?, _ body: () throws(Failure) -> CFTypeRef?
    ) -> OSStatus {
        do {
            let object = try body()
            result?.pointee = object
            return errSecSuccess
        } catch {
            result?.pointee = nil
            switch error {
            case .status(let status): return status
            case .param: return errSecParam
            }
        }
    }

    static func parse(_ dictionary: CFDictionary) throws(Failure) -> SecItemQuery {
        var entries: [(key: Any, value: Any)] = []
        entries.reserveCapacity(dictionary.count)
        for (key, value) in dictionary { entries.append((key, value)) }
        do {
            return try SecItemQuery(entries)
        } catch {
            throw .param(error.message)
        }
    }

    static func query(_ parsed: SecItemQuery, defaultLimit: MatchLimit) throws(Failure) -> Query {
        do {
            return try parsed.query(defaultLimit: defaultLimit)
        } catch {
            throw .param(error.message)
        }
    }

    /// Runs an operation on the store of `ARCA_SOCKET` (or the default socket).
    static func keychain<R>(_ body: (ItemStore) throws(KeychainError) -> R) throws(Failure) -> R {
        do {
            return try body(ItemStore())
        } catch {
            throw .status(error.status)
        }
    }
}
