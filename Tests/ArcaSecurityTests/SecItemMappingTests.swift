import ArcaProtocol
import Foundation
import Testing

@testable import ArcaSecurity

/// SecItem dictionaries → protocol queries, and reply items → Apple-shaped
/// results. No daemon needed.
@Suite struct SecItemMappingTests {
    func parse(_ dictionary: CFDictionary) throws -> SecItemQuery {
        var entries: [(key: Any, value: Any)] = []
        for (k, v) in dictionary { entries.append((k, v)) }
        return try SecItemQuery(entries)
    }

    @Test func swiftDictionaryWithEveryKindOfValue() throws {
        let created = Date(timeIntervalSince1970: 1_700_000_000.25)
        let query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: "example.com",
            kSecAttrAccount as String: "alice",
            kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
            kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
            kSecAttrPort as String: 8443,
            kSecAttrPath as String: "/login",
            kSecAttrSecurityDomain as String: "realm",
            kSecAttrLabel as String: "Example",
            kSecAttrDescription as String: "web form",
            kSecAttrComment as String: "note",
            kSecAttrGeneric as String: Data([1, 2, 3]),
            kSecAttrCreator as String: NSNumber(value: 0x6170_706C),
            kSecAttrType as String: "note",
            kSecAttrIsInvisible as String: true,
            kSecAttrIsNegative as String: kCFBooleanFalse as Any,
            kSecAttrCreationDate as String: created,
            kSecAttrAccessGroup as String: "team.group",
            kSecAttrSynchronizable as String: kCFBooleanTrue!,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            kSecValueData as String: "pw".data(using: .utf8) as Any,
            kSecReturnData as String: kCFBooleanTrue as Any,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
            kSecMatchCaseInsensitive as String: NSNumber(value: true),
            kSecUseDataProtectionKeychain as String: true,
        ]
        let parsed = try parse(query as CFDictionary)
        #expect(parsed.itemClass == .internetPassword)
        #expect(
            parsed.attributes == [
                .server: .string("example.com"), .account: .string("alice"), .protocol: .string("htps"),
                .authenticationType: .string("form"), .port: .uint32(8443), .path: .string("/login"),
                .securityDomain: .string("realm"), .label: .string("Example"), .description: .string("web form"),
                .comment: .string("note"), .generic: .bytes([1, 2, 3]), .creator: .uint32(0x6170_706C),
                .type: .uint32(0x6E6F_7465), .isInvisible: .bool(true), .isNegative: .bool(false),
                .creationDate: .date(microsecondsSinceEpoch: 1_700_000_000_250_000),
                .accessGroup: .string("team.group"), .synchronizable: .bool(true),
                .accessible: .accessibility(.afterFirstUnlockThisDeviceOnly),
            ])
        #expect(parsed.valueData == Array("pw".utf8))
        #expect(parsed.returnFlags == [.data, .attributes])
        #expect(parsed.matchLimit == .all)
        #expect(parsed.caseInsensitive)
        #expect(!parsed.synchronizableAny)
    }

    @Test func mutableDictionaryWithSetObjectAndSetValue() throws {
        let query = NSMutableDictionary()
        query.setObject(kSecClassGenericPassword, forKey: kSecClass)
        query.setValue("svc", forKey: kSecAttrService as String)
        query.setObject("acct", forKey: kSecAttrAccount)
        query.setValue(kCFBooleanTrue, forKey: kSecReturnPersistentRef as String)
        query.setValue(kSecAttrSynchronizableAny, forKey: kSecAttrSynchronizable as String)
        query.setObject(NSNumber(value: 3), forKey: kSecMatchLimit)
        query.setValue("dropped", forKey: kSecAttrLabel as String)
        query.setValue(nil, forKey: kSecAttrLabel as String)
        let parsed = try parse(query as CFDictionary)
        let q = try parsed.query(defaultLimit: .one)
        #expect(
            q
                == Query(
                    itemClass: .genericPassword, attributes: [.service: .string("svc"), .account: .string("acct")],
                    matchLimit: .count(3), returnFlags: .persistentRef, synchronizableAny: true))
    }

    @Test func cfStringKeyedAndAnyObjectDictionaries() throws {
        let a = [kSecClass: kSecClassGenericPassword, kSecAttrService: "s", kSecReturnRef: true] as [CFString: Any]
        #expect(try parse(a as CFDictionary).returnFlags == .attributes)
        var b = [String: AnyObject]()
        b[kSecClass as String] = kSecClassGenericPassword
        b[kSecAttrAccount as String] = "x" as AnyObject?
        b[kSecValuePersistentRef as String] = Data([9, 9]) as AnyObject
        b[kSecMatchLimit as String] = kSecMatchLimitOne
        let parsed = try parse(b as CFDictionary)
        #expect(parsed.attributes == [.account: .string("x")])
        #expect(parsed.persistentRef == [9, 9])
        #expect(parsed.matchLimit == .one)
    }

    @Test func deprecatedAlwaysClassesMapToAfterFirstUnlock() throws {
        let d = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccessible as String: kSecAttrAccessibleAlways]
        #expect(try parse(d as CFDictionary).attributes == [.accessible: .accessibility(.afterFirstUnlock)])
    }

    @Test func invalidDictionariesAreRefusedWithTheKeyNamed() {
        func message(_ d: [String: Any]) -> String? {
            do {
                _ = try parse(d as CFDictionary)
                return nil
            } catch let error as SecItemQuery.Invalid {
                return error.message
            } catch {
                return "other"
            }
        }
        #expect(message(["class": "keys"]) == "kSecClass: only generic and internet passwords are supported")
        #expect(message(["bogus": 1]) == "unknown key bogus")
        #expect(message(["port": "http"]) == "port must be a number from 0 to 4294967295")
        #expect(message(["port": -1]) == "port must be a number from 0 to 4294967295")
        #expect(message(["svce": 5]) == "svce must be a string")
        #expect(message(["pdmn": "nope"]) == "pdmn must be one of the kSecAttrAccessible… values")
        #expect(message(["m_Limit": 0]) != nil)
        #expect(message(["v_Ref": Data()]) == "kSecValueRef: password items have no references on Linux")
        #expect((try? parse(["svce": "s"] as CFDictionary).query(defaultLimit: .one)) == nil)
    }

    @Test func resultsAreShapedAsOnApplePlatforms() throws {
        let item = ResultItem(
            attributes: [
                .itemClass: .itemClass(.genericPassword), .service: .string("s"), .account: .string("a"),
                .port: .uint32(22), .synchronizable: .bool(false), .accessible: .accessibility(.whenUnlocked),
                .creationDate: .date(microsecondsSinceEpoch: 1_500_000),
            ],
            data: [7, 8], persistentRef: [1])
        // Data alone: NSData, which casts to Data, NSData and NSData?.
        let data: AnyObject? = SecItemResults.object([item], flags: .data, limit: .one)
        #expect(data as? Data == Data([7, 8]))
        #expect((data as? NSData)?.length == 2)
        let forced = data as! NSData?
        #expect(forced?.length == 2)
        // A persistent reference alone: NSData too.
        #expect(SecItemResults.object([item], flags: .persistentRef, limit: .one) as? Data == Data([1]))
        // Attributes: a dictionary with Apple's keys and Foundation values.
        let attributes = SecItemResults.object([item], flags: [.attributes, .data], limit: .one)
        let dictionary = try #require(attributes as? [String: Any])
        #expect(dictionary[kSecClass as String] as? String == "genp")
        #expect(dictionary[kSecAttrService as String] as? String == "s")
        #expect(dictionary[kSecAttrAccount as String] as? String == "a")
        #expect(dictionary[kSecAttrPort as String] as? Int == 22)
        #expect(dictionary[kSecAttrSynchronizable as String] as? Bool == false)
        #expect(dictionary[kSecAttrAccessible as String] as? String == "ak")
        #expect(dictionary[kSecAttrCreationDate as String] as? Date == Date(timeIntervalSince1970: 1.5))
        #expect(dictionary[kSecValueData as String] as? Data == Data([7, 8]))
        #expect(dictionary[kSecValuePersistentRef as String] == nil)
        #expect((attributes as? NSDictionary)?.count == 8)
        // Match-limit all: an array.
        let all = SecItemResults.object([item, item], flags: .attributes, limit: .all)
        #expect((all as? [[String: Any]])?.count == 2)
        #expect((all as? [NSDictionary])?.count == 2)
        #expect((SecItemResults.object([item], flags: .data, limit: .all) as? [Data]) == [Data([7, 8])])
        // No kSecReturn… key: no result.
        #expect(SecItemResults.object([item], flags: [], limit: .one) == nil)
    }

    @Test func errorCodesAndMessagesAreApples() {
        #expect(noErr == 0)
        #expect(errSecSuccess == 0)
        #expect(errSecParam == -50)
        #expect(errSecNotAvailable == -25291)
        #expect(errSecAuthFailed == -25293)
        #expect(errSecDuplicateItem == -25299)
        #expect(errSecItemNotFound == -25300)
        #expect(errSecInteractionNotAllowed == -25308)
        #expect(errSecDecode == -26275)
        #expect(errSecMissingEntitlement == -34018)
        #expect(
            SecCopyErrorMessageString(errSecItemNotFound, nil) as String?
                == "The specified item could not be found in the keychain.")
        #expect(
            SecCopyErrorMessageString(errSecDuplicateItem, nil) as String?
                == "The specified item already exists in the keychain.")
    }
}
