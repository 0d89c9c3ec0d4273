// Example port 3 — an access-group-aware wrapper that updates an existing item
// in place (SecItemUpdate) and adds it otherwise, lists the accounts of a
// service, and reads attribute dictionaries. The only change from the
// Apple-platform original is `import Security` → `import ArcaSecurity`.
import ArcaSecurity
import Foundation

struct SharedKeychain {
    enum KeychainError: Error, Equatable {
        case noPassword
        case unexpectedPasswordData
        case unhandledError(status: OSStatus)
    }

    let service: String
    let accessGroup: String?

    init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    private func query(account: String? = nil) -> [String: AnyObject] {
        var query = [String: AnyObject]()
        query[kSecClass as String] = kSecClassGenericPassword
        query[kSecAttrService as String] = service as AnyObject?
        if let account = account {
            query[kSecAttrAccount as String] = account as AnyObject?
        }
        if let accessGroup = accessGroup {
            query[kSecAttrAccessGroup as String] = accessGroup as AnyObject?
        }
        return query
    }

    func savePassword(_ password: String, account: String) throws {
        let encodedPassword = password.data(using: String.Encoding.utf8)!
        do {
            _ = try readPassword(account: account)
            var attributesToUpdate = [String: AnyObject]()
            attributesToUpdate[kSecValueData as String] = encodedPassword as AnyObject?
            let status = SecItemUpdate(query(account: account) as CFDictionary, attributesToUpdate as CFDictionary)
            guard status == noErr else { throw KeychainError.unhandledError(status: status) }
        } catch KeychainError.noPassword {
            var newItem = query(account: account)
            newItem[kSecValueData as String] = encodedPassword as AnyObject?
            let status = SecItemAdd(newItem as CFDictionary, nil)
            guard status == noErr else { throw KeychainError.unhandledError(status: status) }
        }
    }

    func readPassword(account: String) throws -> String {
        var query = query(account: account)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnData as String] = kCFBooleanTrue
        var queryResult: AnyObject?
        let status = withUnsafeMutablePointer(to: &queryResult) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        guard status != errSecItemNotFound else { throw KeychainError.noPassword }
        guard status == noErr else { throw KeychainError.unhandledError(status: status) }
        guard let existingItem = queryResult as? [String: AnyObject],
            let passwordData = existingItem[kSecValueData as String] as? Data,
            let password = String(data: passwordData, encoding: String.Encoding.utf8)
        else { throw KeychainError.unexpectedPasswordData }
        return password
    }

    func accounts() throws -> [String] {
        var query = query()
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnData as String] = kCFBooleanFalse
        var queryResult: AnyObject?
        let status = withUnsafeMutablePointer(to: &queryResult) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        if status == errSecItemNotFound { return [] }
        guard status == noErr else { throw KeychainError.unhandledError(status: status) }
        guard let items = queryResult as? [[String: AnyObject]] else { throw KeychainError.unexpectedPasswordData }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    func deleteItem(account: String) throws {
        let status = SecItemDelete(query(account: account) as CFDictionary)
        guard status == noErr || status == errSecItemNotFound else {
            throw KeychainError.unhandledError(status: status)
        }
    }
}
