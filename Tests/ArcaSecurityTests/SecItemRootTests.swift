import ArcaLibTestSupport
import ArcaSecurity
import Foundation
import Testing

/// The SecItem API against a real arcad (root: the test starts arcad and acts
/// on root's own vault), written in the call shapes of Apple-platform code.
@Suite struct SecItemRootTests {
    let service = "arca.secitem.\(UUID().uuidString)"

    init() throws { _ = try LiveArcad.socketPath() }

    func base(_ account: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
    }

    @Test func addCopyUpdateDelete_root() {
        var add = base("alice")
        add[kSecValueData as String] = "pw1".data(using: .utf8)!
        add[kSecAttrLabel as String] = "Alice"
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)

        var query = base("alice")
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == noErr)
        #expect(result as? Data == Data("pw1".utf8))
        #expect((result as? NSData)?.length == 3)
        let forced = result as! NSData?
        #expect(forced.map { Data(referencing: $0) } == Data("pw1".utf8))

        let changes: [String: Any] = [kSecValueData as String: Data("pw2".utf8), kSecAttrComment as String: "rotated"]
        #expect(SecItemUpdate(base("alice") as CFDictionary, changes as CFDictionary) == errSecSuccess)
        var attributesQuery = base("alice")
        attributesQuery[kSecReturnAttributes as String] = true
        attributesQuery[kSecReturnData as String] = true
        var item: CFTypeRef?
        #expect(SecItemCopyMatching(attributesQuery as CFDictionary, &item) == errSecSuccess)
        let dictionary = item as? [String: Any]
        #expect(dictionary?[kSecValueData as String] as? Data == Data("pw2".utf8))
        #expect(dictionary?[kSecAttrComment as String] as? String == "rotated")
        #expect(dictionary?[kSecAttrLabel as String] as? String == "Alice")
        #expect(dictionary?[kSecAttrAccount as String] as? String == "alice")
        #expect(dictionary?[kSecAttrService as String] as? String == service)
        #expect(dictionary?[kSecClass as String] as? String == kSecClassGenericPassword as String)
        #expect(dictionary?[kSecAttrAccessible as String] as? String == kSecAttrAccessibleWhenUnlocked as String)
        #expect(dictionary?[kSecAttrCreationDate as String] is Date)

        #expect(SecItemDelete(base("alice") as CFDictionary) == errSecSuccess)
        #expect(SecItemDelete(base("alice") as CFDictionary) == errSecItemNotFound)
        result = "stale" as NSString
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecItemNotFound)
        #expect(result == nil)
        #expect(SecItemUpdate(base("alice") as CFDictionary, changes as CFDictionary) == errSecItemNotFound)
    }

    @Test func matchLimitAllReturnsAnArray_root() {
        for name in ["a", "b", "c"] {
            var add = base(name)
            add[kSecValueData as String] = Data(name.utf8)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
        }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecMatchLimit as String: kSecMatchLimitAll,
            kSecReturnAttributes as String: kCFBooleanTrue!,
        ]
        var result: AnyObject?
        #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        let items = result as? [[String: Any]]
        #expect(items?.compactMap { $0[kSecAttrAccount as String] as? String }.sorted() == ["a", "b", "c"])
        #expect((result as? NSArray)?.count == 3)
        // Without kSecReturn…: only the status.
        var none: AnyObject?
        let exists: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        #expect(SecItemCopyMatching(exists as CFDictionary, &none) == errSecSuccess)
        #expect(none == nil)
        #expect(SecItemDelete(exists as CFDictionary) == errSecSuccess)
        #expect(SecItemCopyMatching(exists as CFDictionary, nil) == errSecItemNotFound)
    }

    @Test func addReturnsAttributesAndPersistentReferencesWork_root() throws {
        var add = base("ref")
        add[kSecValueData as String] = Data("by-ref".utf8)
        add[kSecReturnPersistentRef as String] = true
        var ref: AnyObject?
        #expect(SecItemAdd(add as CFDictionary, &ref) == errSecSuccess)
        let persistentRef = try #require(ref as? Data)
        #expect(!persistentRef.isEmpty)
        let byRef: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecValuePersistentRef as String: persistentRef,
            kSecReturnData as String: true,
        ]
        var data: AnyObject?
        #expect(SecItemCopyMatching(byRef as CFDictionary, &data) == errSecSuccess)
        #expect(data as? Data == Data("by-ref".utf8))
        #expect(SecItemDelete(base("ref") as CFDictionary) == errSecSuccess)
    }

    @Test func mutableDictionaryAndCFStringKeyedShapes_root() {
        let query = NSMutableDictionary()
        query.setValue(kSecClassGenericPassword, forKey: kSecClass as String)
        query.setObject(service, forKey: kSecAttrService)
        query.setObject("nsdict", forKey: kSecAttrAccount)
        query.setObject("v".data(using: .utf8)! as NSData, forKey: kSecValueData)
        #expect(SecItemAdd(query, nil) == noErr)
        query.removeObject(forKey: kSecValueData)
        query.setObject(kCFBooleanTrue!, forKey: kSecReturnData)
        var result: AnyObject?
        let status = withUnsafeMutablePointer(to: &result) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        #expect(status == noErr)
        #expect(result as! NSData? == NSData(data: Data("v".utf8)))
        let cfKeyed =
            [kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: "nsdict"]
            as [CFString: Any]
        #expect(SecItemDelete(cfKeyed as CFDictionary) == errSecSuccess)
    }

    @Test func synchronizableAnyMatchesBoth_root() {
        var local = base("sync")
        local[kSecValueData as String] = Data("local".utf8)
        var synced = local
        synced[kSecAttrSynchronizable as String] = true
        synced[kSecValueData as String] = Data("synced".utf8)
        #expect(SecItemAdd(local as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd(synced as CFDictionary, nil) == errSecSuccess)
        var all = base("sync")
        all[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        all[kSecReturnData as String] = true
        var result: AnyObject?
        #expect(SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess)
        #expect((result as? [Data])?.map { String(decoding: $0, as: UTF8.self) }.sorted() == ["local", "synced"])
        var justSynced = base("sync")
        justSynced[kSecAttrSynchronizable as String] = kCFBooleanTrue
        justSynced[kSecReturnData as String] = kCFBooleanTrue
        #expect(SecItemCopyMatching(justSynced as CFDictionary, &result) == errSecSuccess)
        #expect(result as? Data == Data("synced".utf8))
        var deleteAll = base("sync")
        deleteAll[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        #expect(SecItemDelete(deleteAll as CFDictionary) == errSecSuccess)
    }

    @Test func invalidQueriesAreErrSecParam_root() {
        let noClass: [String: Any] = [kSecAttrService as String: service]
        #expect(SecItemCopyMatching(noClass as CFDictionary, nil) == errSecParam)
        #expect(SecItemAdd(noClass as CFDictionary, nil) == errSecParam)
        #expect(SecItemDelete(["bogus": 1] as CFDictionary) == errSecParam)
        let returning = [kSecReturnData as String: true] as CFDictionary
        #expect(SecItemUpdate(base("x") as CFDictionary, returning) == errSecParam)
        #expect(
            SecCopyErrorMessageString(errSecParam, nil) as String?
                == "One or more parameters passed to a function were not valid.")
    }
}
