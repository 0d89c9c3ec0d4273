import ArcaCrypto
import ArcaProtocol
import Foundation
import Testing

@testable import ArcaVault

@Suite struct ItemTests {
    @Test func addThenGetReturnsSecretAndEveryAttribute() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        var attrs = genp("mail", "alice") {
            $0.label = "Mail"
            $0.description = "desc"
            $0.comment = "note"
            $0.generic = [1, 2, 3]
            $0.creator = 0x4152_4341
            $0.type = 42
            $0.isInvisible = true
            $0.isNegative = false
            $0.accessGroup = "group.a"
        }
        let added = try vault.add(.genericPassword, attributes: attrs, secret: secret("s3cret"))
        let results = try vault.copyMatching(
            query({
                $0.service = "mail"
                $0.account = "alice"
            }) {
                $0.returnData = true
                $0.returnAttributes = true
                $0.returnPersistentReference = true
            })
        #expect(results.count == 1)
        let r = try #require(results.first)
        #expect(text(r.data) == "s3cret")
        #expect(r.persistentReference == added.persistentReference)
        let got = try #require(r.attributes)
        #expect(got.accessible == .whenUnlocked)
        #expect(got.synchronizable == false)
        let created = try #require(got.creationDate)
        #expect(got.modificationDate == created)
        #expect(abs(created - Date().timeIntervalSince1970) < 60)
        attrs.accessible = .whenUnlocked
        attrs.synchronizable = false
        attrs.creationDate = created
        attrs.modificationDate = created
        #expect(got == attrs)
    }

    @Test func internetPasswordAttributesRoundTrip() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let attrs = ItemAttributes {
            $0.server = "example.com"
            $0.account = "bob"
            $0.protocol = "htps"
            $0.port = 443
            $0.path = "/login"
            $0.securityDomain = "realm"
            $0.authenticationType = "dflt"
        }
        try vault.add(.internetPassword, attributes: attrs, secret: secret("pw"))
        let r = try vault.copyMatching(
            Query(
                .internetPassword,
                attributes: ItemAttributes {
                    $0.server = "example.com"
                    $0.port = 443
                },
                returnData: true, returnAttributes: true))
        #expect(text(r[0].data) == "pw")
        #expect(r[0].attributes?.path == "/login")
        #expect(r[0].attributes?.authenticationType == "dflt")
        // A generic-password query does not see internet passwords.
        #expect(vaultError { _ = try vault.copyMatching(Query(.genericPassword)) } == .itemNotFound)
    }

    @Test func duplicatePrimaryKeyIsRejectedAndAccessibilityIsNotPartOfIt() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("svc", "acct"), secret: secret("1"))
        let dup = vaultError {
            try vault.add(
                .genericPassword, attributes: genp("svc", "acct") { $0.accessible = .afterFirstUnlock },
                secret: secret("2"))
        }
        #expect(dup == .duplicateItem)
        #expect(dup?.status == .duplicateItem)
        #expect(dup?.status.rawValue == -25299)
        // Label is not part of the key either.
        #expect(
            vaultError {
                try vault.add(.genericPassword, attributes: genp("svc", "acct") { $0.label = "x" }, secret: secret("3"))
            } == .duplicateItem)
        // Every primary-key part makes a distinct item: account, group, synchronizable.
        try vault.add(.genericPassword, attributes: genp("svc", "acct2"), secret: secret("4"))
        try vault.add(.genericPassword, attributes: genp("svc", "acct", group: "g"), secret: secret("5"))
        try vault.add(
            .genericPassword, attributes: genp("svc", "acct") { $0.synchronizable = true }, secret: secret("6"))
        // Keys are case-sensitive.
        try vault.add(.genericPassword, attributes: genp("SVC", "acct"), secret: secret("7"))
        #expect(try vault.itemCount() == 5)
    }

    @Test func internetPrimaryKeyIncludesEveryPart() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        func inet(_ body: (inout ItemAttributes) -> Void) -> ItemAttributes {
            var a = ItemAttributes {
                $0.server = "s"
                $0.account = "a"
                $0.protocol = "htps"
                $0.port = 1
                $0.path = "/"
            }
            body(&a)
            return a
        }
        try vault.add(.internetPassword, attributes: inet { _ in }, secret: secret("x"))
        #expect(
            vaultError { try vault.add(.internetPassword, attributes: inet { $0.comment = "c" }, secret: secret("x")) }
                == .duplicateItem)
        for variant: (inout ItemAttributes) -> Void in [
            { $0.port = 2 }, { $0.path = "/x" }, { $0.protocol = "http" }, { $0.securityDomain = "d" },
            { $0.authenticationType = "form" }, { $0.accessGroup = "g" }, { $0.server = "t" }, { $0.account = "b" },
        ] {
            try vault.add(.internetPassword, attributes: inet(variant), secret: secret("x"))
        }
        #expect(try vault.itemCount() == 9)
    }

    @Test func secretLargerThanOneMebibyteIsAParamErrorNamingTheLimit() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let exact = try SecretBytes(count: 1 << 20)
        try vault.add(.genericPassword, attributes: genp("big", "ok"), secret: exact)
        let tooBig = try SecretBytes(count: (1 << 20) + 1)
        let error = vaultError { try vault.add(.genericPassword, attributes: genp("big", "no"), secret: tooBig) }
        #expect(error?.status == .param)
        #expect(error?.status.rawValue == -50)
        #expect(error?.description.contains("1 MiB (1048576 bytes)") == true)
        let r = try vault.copyMatching(
            query({
                $0.service = "big"
                $0.account = "ok"
            }) { $0.returnData = true })
        #expect(r[0].data?.count == 1 << 20)
    }

    @Test func storeSetsDatesAndRejectsCallerDatesAndForeignAttributes() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        #expect(
            vaultError {
                try vault.add(.genericPassword, attributes: genp("s", "a") { $0.creationDate = 1 }, secret: secret("x"))
            }?.status == .param)
        #expect(
            vaultError {
                try vault.add(.genericPassword, attributes: genp("s", "a") { $0.server = "x" }, secret: secret("x"))
            }
                == .param("server is not an attribute of generic passwords"))
        #expect(
            vaultError {
                try vault.add(.internetPassword, attributes: ItemAttributes { $0.service = "x" }, secret: secret("x"))
            }
                == .param("service is not an attribute of internet passwords"))
    }

    @Test func persistentReferenceIsStableAcrossUpdatesAndFindsTheItem() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let ref = try #require(
            try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("1")).persistentReference)
        try vault.add(.genericPassword, attributes: genp("s", "b"), secret: secret("2"))
        try vault.update(query({ $0.account = "a" }), changes: ItemAttributes { $0.label = "new" }, secret: secret("3"))
        let r = try vault.copyMatching(
            Query(.genericPassword, persistentReference: ref, returnData: true, returnAttributes: true))
        #expect(r.count == 1)
        #expect(text(r[0].data) == "3")
        #expect(r[0].attributes?.label == "new")
        let again = try vault.copyMatching(query({ $0.account = "a" }) { $0.returnPersistentReference = true })
        #expect(again[0].persistentReference == ref)
        #expect(throws: VaultError.self) { try PersistentReference(bytes: [1, 2]) }
    }
}
