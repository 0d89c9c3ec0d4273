// Example port 2 — an object wrapper that archives values with
// NSKeyedArchiver and saves by deleting then adding, in the style of older
// Objective-C-era wrappers (NSMutableDictionary, setObject(_:forKey:),
// `as! NSData?`). The only change from the Apple-platform original is
// `import Security` → `import ArcaSecurity` (and UIKit → Foundation).
import ArcaSecurity
import Foundation

class ArchivingKeychain: NSObject {
    private let serviceName: String

    init(serviceName: String) {
        self.serviceName = serviceName
        super.init()
    }

    private func baseQuery(forKey key: String) -> NSMutableDictionary {
        let query = NSMutableDictionary()
        query.setObject(kSecClassGenericPassword, forKey: kSecClass)
        query.setObject(serviceName, forKey: kSecAttrService)
        query.setObject(key, forKey: kSecAttrAccount)
        return query
    }

    func setObject(_ object: Any, forKey key: String) -> Bool {
        guard let data = try? NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false)
        else { return false }
        let query = baseQuery(forKey: key)
        SecItemDelete(query as CFDictionary)
        query.setObject(data, forKey: kSecValueData)
        query.setObject(kSecAttrAccessibleWhenUnlocked, forKey: kSecAttrAccessible)
        return SecItemAdd(query as CFDictionary, nil) == noErr
    }

    func object(forKey key: String) -> Any? {
        let query = baseQuery(forKey: key)
        query.setObject(kCFBooleanTrue!, forKey: kSecReturnData)
        query.setObject(kSecMatchLimitOne, forKey: kSecMatchLimit)
        var result: AnyObject?
        let status = withUnsafeMutablePointer(to: &result) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        guard status == noErr, let data = result as! NSData? else { return nil }
        return try? NSKeyedUnarchiver.unarchiveTopLevelObjectWithData(data as Data)
    }

    func removeObject(forKey key: String) -> Bool {
        let status = SecItemDelete(baseQuery(forKey: key) as CFDictionary)
        return status == noErr || status == errSecItemNotFound
    }
}
