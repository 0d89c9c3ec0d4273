import ArcaKeyring
import ArcaProtocol
import Testing

@testable import Arca

/// How a `Keychain` turns calls into protocol queries, and which reads may use
/// the kernel. No daemon needed.
@Suite struct KeychainQueryTests {
    @Test func genericPasswordQueryNamesServiceAccountAndGroup() {
        let keychain = Keychain(service: "svc", accessGroup: "team.shared").synchronizable(true)
        let query = keychain.query(key: "token", returning: .data)
        #expect(query.itemClass == .genericPassword)
        #expect(
            query.attributes == [
                .service: .string("svc"), .account: .string("token"), .accessGroup: .string("team.shared"),
                .synchronizable: .bool(true),
            ])
        #expect(query.matchLimit == .one)
        #expect(query.returnFlags == .data)
    }

    @Test func internetPasswordQueryNamesServerProtocolAndAuthentication() {
        let keychain = Keychain(server: "example.com", protocolType: .https, authenticationType: .htmlForm)
        let query = keychain.query(key: "alice", limit: .all, returning: .attributes)
        #expect(query.itemClass == .internetPassword)
        #expect(
            query.attributes == [
                .server: .string("example.com"), .protocol: .string("htps"), .authenticationType: .string("form"),
                .account: .string("alice"),
            ])
        #expect(query.matchLimit == .all)
    }

    @Test func configurationReturnsCopiesAndWritesTheirAttributes() {
        let base = Keychain(service: "svc")
        let configured = base.accessibility(.afterFirstUnlock).label("Label").comment("Comment")
        #expect(base.accessibility == .whenUnlocked)
        #expect(base.writtenAttributes == [.accessible: .accessibility(.whenUnlocked)])
        #expect(
            configured.writtenAttributes == [
                .accessible: .accessibility(.afterFirstUnlock), .label: .string("Label"),
                .comment: .string("Comment"),
            ])
    }

    @Test func singleSecretByPrimaryKeyGoesToTheKernel() {
        let query = Keychain(service: "svc").query(key: "k", returning: .data)
        #expect(
            ItemStore.kernelKey(for: query)
                == .genericPassword(GenericPasswordKey(service: "svc", account: "k")))
        let grouped = Keychain(service: "svc", accessGroup: "g").synchronizable(true).query(key: "k", returning: .data)
        #expect(
            ItemStore.kernelKey(for: grouped)
                == .genericPassword(
                    GenericPasswordKey(service: "svc", account: "k", accessGroup: "g", synchronizable: true)))
        let inet = Keychain(server: "h", protocolType: .ssh).query(key: "bob", returning: .data)
        #expect(
            ItemStore.kernelKey(for: inet)
                == .internetPassword(
                    InternetPasswordKey(server: "h", account: "bob", protocol: "ssh ", authenticationType: "dflt")))
    }

    @Test func readsNeedingAttributesManyItemsOrOtherFiltersGoToArcad() {
        let keychain = Keychain(service: "svc")
        #expect(ItemStore.kernelKey(for: keychain.query(key: "k", returning: [.data, .attributes])) == nil)
        #expect(ItemStore.kernelKey(for: keychain.query(key: "k", limit: .all, returning: .data)) == nil)
        #expect(ItemStore.kernelKey(for: keychain.query(key: nil, returning: .data)) == nil)
        var labelled = keychain.query(key: "k", returning: .data)
        labelled.attributes[.label] = .string("x")
        #expect(ItemStore.kernelKey(for: labelled) == nil)
        var anySync = keychain.query(key: "k", returning: .data)
        anySync.synchronizableAny = true
        #expect(ItemStore.kernelKey(for: anySync) == nil)
        var caseless = keychain.query(key: "k", returning: .data)
        caseless.caseInsensitive = true
        #expect(ItemStore.kernelKey(for: caseless) == nil)
        var byRef = Query(itemClass: .genericPassword, persistentRef: [1, 2], returnFlags: .data)
        #expect(ItemStore.kernelKey(for: byRef) == nil)
        byRef.persistentRef = nil
        #expect(ItemStore.kernelKey(for: byRef) == nil)  // no service/account
    }

    @Test func errorsCarryApplesNumbersAndStableNames() {
        #expect(KeychainError.Code.itemNotFound.rawValue == -25300)
        #expect(KeychainError.Code.duplicateItem.rawValue == -25299)
        #expect(KeychainError.Code.interactionNotAllowed.rawValue == -25308)
        #expect(KeychainError.Code.notAvailable.rawValue == -25291)
        #expect(KeychainError.Code.param.rawValue == -50)
        #expect(KeychainError.Code.decode.rawValue == -26275)
        #expect(KeychainError.Code.missingEntitlement.rawValue == -34018)
        #expect(KeychainError.Code.authFailed.rawValue == -25293)
        let error = KeychainError(status: -25308)
        #expect(error.code == .interactionNotAllowed)
        #expect(error.status == -25308)
        #expect(error.description == "User interaction is not allowed. (interactionNotAllowed, OSStatus -25308)")
        #expect(KeychainError(status: -1).code.description == "OSStatus -1")
    }

    @Test func arcadNotRunningIsNotAvailableNeverNil() {
        let keychain = Keychain(service: "svc").socketPath("/nonexistent/arca-test.sock")
        #expect(throws: KeychainError.self) { try keychain.get("k") }
        do {
            _ = try keychain.get("k")
        } catch {
            #expect(error.code == .notAvailable)
            #expect(error.status == -25291)
        }
        #expect(keychain["k"] == nil)
    }
}
