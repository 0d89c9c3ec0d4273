// Example port 1 — a string wrapper in the common style of iOS apps: save,
// read and delete a string by key, with `[String: Any]` queries and
// `query as CFDictionary`. The only change from the Apple-platform original is
// `import Security` → `import ArcaSecurity`.
import ArcaSecurity
import Foundation

final class StringKeychain: Sendable {
    static let standard = StringKeychain(service: Bundle.main.bundleIdentifier ?? "com.example.app")

    let service: String

    init(service: String) {
        self.service = service
    }

    @discardableResult
    func save(_ value: String, forKey key: String) -> Bool {
        guard let data = value.data(using: .utf8) else { return false }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        SecItemDelete(query as CFDictionary)
        var attributes = query
        attributes[kSecValueData as String] = data
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        let status = SecItemAdd(attributes as CFDictionary, nil)
        return status == errSecSuccess
    }

    func read(forKey key: String) -> String? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var dataTypeRef: AnyObject?
        let status: OSStatus = SecItemCopyMatching(query as CFDictionary, &dataTypeRef)
        if status == noErr, let data = dataTypeRef as? Data {
            return String(data: data, encoding: .utf8)
        }
        if status != errSecItemNotFound {
            print("Keychain read failed: \(SecCopyErrorMessageString(status, nil) as String? ?? "\(status)")")
        }
        return nil
    }

    /// The status of a read, for callers that must tell "locked" from "absent".
    func readStatus(forKey key: String) -> OSStatus {
        let query =
            [
                kSecClass: kSecClassGenericPassword,
                kSecAttrService: service,
                kSecAttrAccount: key,
                kSecReturnData: true,
            ] as [CFString: Any]
        var result: CFTypeRef?
        return SecItemCopyMatching(query as CFDictionary, &result)
    }

    @discardableResult
    func delete(forKey key: String) -> Bool {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        let status = SecItemDelete(query as CFDictionary)
        return status == errSecSuccess || status == errSecItemNotFound
    }
}
