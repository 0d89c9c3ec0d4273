import ArcaLibTestSupport
import ArcaSecurity
import Foundation
import Testing

/// SecItemAdd and SecItemUpdate refuse a synchronizable item of a ThisDeviceOnly
/// class with errSecParam (-50), as on Apple platforms, and store nothing.
extension SecItemRootTests {
    @Test func addAndUpdateRefuseSynchronizableThisDeviceOnly_root() {
        var add = base("both")
        add[kSecValueData as String] = Data("pw".utf8)
        add[kSecAttrSynchronizable as String] = kCFBooleanTrue
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecParam)
        #expect(errSecParam == -50)
        var anyBoth = base("both")
        anyBoth[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        #expect(SecItemCopyMatching(anyBoth as CFDictionary, nil) == errSecItemNotFound)

        // A ThisDeviceOnly item made synchronizable.
        var local = base("local")
        local[kSecValueData as String] = Data("pw".utf8)
        local[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        #expect(SecItemAdd(local as CFDictionary, nil) == errSecSuccess)
        let makeSynchronizable: [String: Any] = [kSecAttrSynchronizable as String: kCFBooleanTrue as Any]
        #expect(SecItemUpdate(base("local") as CFDictionary, makeSynchronizable as CFDictionary) == errSecParam)

        // A synchronizable item moved to a ThisDeviceOnly class.
        var synced = base("synced")
        synced[kSecValueData as String] = Data("pw".utf8)
        synced[kSecAttrSynchronizable as String] = kCFBooleanTrue
        #expect(SecItemAdd(synced as CFDictionary, nil) == errSecSuccess)
        var syncedQuery = base("synced")
        syncedQuery[kSecAttrSynchronizable as String] = kCFBooleanTrue
        let makeLocal: [String: Any] = [
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly as Any
        ]
        #expect(SecItemUpdate(syncedQuery as CFDictionary, makeLocal as CFDictionary) == errSecParam)

        // Both still as they were.
        var check = base("local")
        check[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: CFTypeRef?
        #expect(SecItemCopyMatching(check as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [String: Any])?[kSecAttrSynchronizable as String] as? Bool == false)
        syncedQuery[kSecReturnAttributes as String] = kCFBooleanTrue
        #expect(SecItemCopyMatching(syncedQuery as CFDictionary, &result) == errSecSuccess)
        let accessible = (result as? [String: Any])?[kSecAttrAccessible as String] as? String
        #expect(accessible == (kSecAttrAccessibleWhenUnlocked as String))

        var cleanup = base("local")
        cleanup[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        _ = SecItemDelete(cleanup as CFDictionary)
        cleanup = base("synced")
        cleanup[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        _ = SecItemDelete(cleanup as CFDictionary)
    }
}
