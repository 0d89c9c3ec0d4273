import ArcaCrypto
import Testing

@testable import ArcaVault

@Suite struct QueryTests {
    /// Three items of service "svc" (accounts a, b, c) and one of "other".
    func populated(_ dir: TempDir) throws -> Vault {
        let (vault, _) = try makeVault(dir)
        for account in ["a", "b", "c"] {
            try vault.add(
                .genericPassword,
                attributes: genp("svc", account) {
                    $0.label = "L-\(account)"
                    $0.type = 7
                }, secret: secret("pw-\(account)"))
        }
        try vault.add(.genericPassword, attributes: genp("other", "a") { $0.type = 7 }, secret: secret("pw-other"))
        return vault
    }

    @Test func matchLimitOneAllAndN() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        #expect(try vault.copyMatching(query { $0.service = "svc" }).count == 1)
        #expect(try vault.copyMatching(query({ $0.service = "svc" }) { $0.matchLimit = .all }).count == 3)
        #expect(try vault.copyMatching(query({ $0.service = "svc" }) { $0.matchLimit = .count(2) }).count == 2)
        #expect(try vault.copyMatching(query({ $0.type = 7 }) { $0.matchLimit = .all }).count == 4)
        #expect(try vault.copyMatching(Query(.genericPassword, matchLimit: .all)).count == 4)
        #expect(
            vaultError { _ = try vault.copyMatching(query({ $0.service = "svc" }) { $0.matchLimit = .count(0) }) }?
                .status == .param)
    }

    @Test func matchesOnNonIndexedAttributes() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        let r = try vault.copyMatching(query({ $0.label = "L-b" }) { $0.returnData = true })
        #expect(text(r[0].data) == "pw-b")
        #expect(vaultError { _ = try vault.copyMatching(query { $0.label = "L-z" }) } == .itemNotFound)
        #expect(
            vaultError {
                _ = try vault.copyMatching(
                    query {
                        $0.service = "svc"
                        $0.label = "L-other"
                    })
            } == .itemNotFound)
        #expect(vaultError { _ = try vault.copyMatching(query { $0.service = "nope" }) }?.status.rawValue == -25300)
    }

    @Test func returnTypesAndCombinations() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        let none = try vault.copyMatching(
            query {
                $0.service = "svc"
                $0.account = "a"
            })
        #expect(none[0].data == nil && none[0].attributes == nil && none[0].persistentReference == nil)
        let dataOnly = try vault.copyMatching(
            query({
                $0.service = "svc"
                $0.account = "a"
            }) { $0.returnData = true })
        #expect(
            text(dataOnly[0].data) == "pw-a" && dataOnly[0].attributes == nil && dataOnly[0].persistentReference == nil)
        let attrsAndRef = try vault.copyMatching(
            query({
                $0.service = "svc"
                $0.account = "a"
            }) {
                $0.returnAttributes = true
                $0.returnPersistentReference = true
            })
        #expect(
            attrsAndRef[0].data == nil && attrsAndRef[0].attributes?.label == "L-a"
                && attrsAndRef[0].persistentReference != nil)
        let all = try vault.copyMatching(
            query({ $0.service = "svc" }) {
                $0.matchLimit = .all
                $0.returnData = true
            })
        #expect(all.compactMap { text($0.data) } == ["pw-a", "pw-b", "pw-c"])
    }

    @Test func caseInsensitiveMatchingIsAnOption() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        #expect(
            vaultError {
                _ = try vault.copyMatching(
                    query {
                        $0.service = "SVC"
                        $0.account = "A"
                    })
            } == .itemNotFound)
        let r = try vault.copyMatching(
            query({
                $0.service = "SVC"
                $0.account = "A"
                $0.label = "l-a"
            }) {
                $0.caseInsensitive = true
                $0.returnData = true
            })
        #expect(text(r[0].data) == "pw-a")
        // Also with the whole primary key named (which otherwise takes the exact index).
        let pk = try vault.copyMatching(
            query({
                $0.service = "Svc"
                $0.account = "B"
                $0.accessGroup = ""
            }) { $0.caseInsensitive = true })
        #expect(pk.count == 1)
    }

    @Test func synchronizableAbsentMeansNoAndAnyMatchesBoth() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(.genericPassword, attributes: genp("s", "a"), secret: secret("local"))
        try vault.add(
            .genericPassword, attributes: genp("s", "a") { $0.synchronizable = true }, secret: secret("synced"))
        let plain = try vault.copyMatching(
            query({ $0.service = "s" }) {
                $0.matchLimit = .all
                $0.returnData = true
            })
        #expect(plain.compactMap { text($0.data) } == ["local"])
        let yes = try vault.copyMatching(
            query({
                $0.service = "s"
                $0.synchronizable = true
            }) {
                $0.matchLimit = .all
                $0.returnData = true
            })
        #expect(yes.compactMap { text($0.data) } == ["synced"])
        let any = try vault.copyMatching(
            query({ $0.service = "s" }) {
                $0.matchLimit = .all
                $0.synchronizable = .any
                $0.returnData = true
            })
        #expect(any.compactMap { text($0.data) } == ["local", "synced"])
        // Exact primary key, synchronizable item.
        let pk = try vault.copyMatching(
            query({
                $0.service = "s"
                $0.account = "a"
                $0.accessGroup = ""
            }) {
                $0.synchronizable = .yes
                $0.returnData = true
            })
        #expect(text(pk[0].data) == "synced")
        #expect(try vault.delete(query({ $0.service = "s" }) { $0.synchronizable = .any }) == 2)
    }

    @Test func updateAppliesToEveryMatchAndSetsModificationDate() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        let before = try vault.copyMatching(
            query({
                $0.service = "svc"
                $0.account = "a"
            }) { $0.returnAttributes = true })[0].attributes
        let n = try vault.update(
            query { $0.service = "svc" }, changes: ItemAttributes { $0.comment = "updated" }, secret: secret("new"))
        #expect(n == 3)
        let after = try vault.copyMatching(
            query({ $0.comment = "updated" }) {
                $0.matchLimit = .all
                $0.returnData = true
                $0.returnAttributes = true
            })
        #expect(after.count == 3)
        #expect(after.allSatisfy { text($0.data) == "new" })
        let a = try #require(after[0].attributes)
        #expect(a.creationDate == before?.creationDate)
        #expect(try #require(a.modificationDate) >= (before?.modificationDate ?? .infinity))
        #expect(a.label == "L-a")  // untouched fields stay
        let other = try vault.copyMatching(
            query({ $0.service = "other" }) {
                $0.returnData = true
                $0.returnAttributes = true
            })
        #expect(text(other[0].data) == "pw-other" && other[0].attributes?.comment == nil)
        #expect(
            vaultError { try vault.update(query { $0.service = "none" }, changes: ItemAttributes { $0.label = "x" }) }
                == .itemNotFound)
    }

    @Test func updateThatWouldCollideIsADuplicateAndChangesNothing() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        let e = vaultError {
            try vault.update(
                query {
                    $0.service = "svc"
                    $0.account = "a"
                }, changes: ItemAttributes { $0.account = "b" })
        }
        #expect(e == .duplicateItem)
        // Renaming every "svc" item to the same account collides among the matches themselves: nothing changes.
        #expect(
            vaultError { try vault.update(query { $0.service = "svc" }, changes: ItemAttributes { $0.account = "z" }) }
                == .duplicateItem)
        #expect(
            try vault.copyMatching(
                query({ $0.service = "svc" }) {
                    $0.matchLimit = .all
                    $0.returnAttributes = true
                }
            )
            .compactMap { $0.attributes?.account } == ["a", "b", "c"])
        // A non-colliding change of a primary-key attribute works and is found by the new key.
        try vault.update(
            query {
                $0.service = "svc"
                $0.account = "a"
            }, changes: ItemAttributes { $0.account = "d" })
        #expect(
            try vault.copyMatching(
                query {
                    $0.service = "svc"
                    $0.account = "d"
                    $0.accessGroup = ""
                }
            ).count == 1)
        #expect(
            vaultError {
                _ = try vault.copyMatching(
                    query {
                        $0.service = "svc"
                        $0.account = "a"
                    })
            } == .itemNotFound)
    }

    @Test func updateCanMoveAnItemToAnotherClass() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        try vault.update(
            query {
                $0.service = "svc"
                $0.account = "a"
            }, changes: ItemAttributes { $0.accessible = .afterFirstUnlock })
        let r = try vault.copyMatching(
            query({ $0.accessible = .afterFirstUnlock }) {
                $0.returnData = true
                $0.returnAttributes = true
            })
        #expect(text(r[0].data) == "pw-a" && r[0].attributes?.accessible == .afterFirstUnlock)
        vault.lock([.afterFirstUnlock])
        #expect(
            vaultError {
                _ = try vault.copyMatching(
                    query {
                        $0.service = "svc"
                        $0.account = "a"
                    })
            } == .locked)
    }

    @Test func deleteRemovesEveryMatch() throws {
        let dir = try TempDir()
        let vault = try populated(dir)
        #expect(try vault.delete(query { $0.service = "svc" }) == 3)
        #expect(try vault.itemCount() == 1)
        #expect(vaultError { try vault.delete(query { $0.service = "svc" }) } == .itemNotFound)
        #expect(try vault.delete(Query(.genericPassword)) == 1)
        #expect(try vault.itemCount() == 0)
    }
}
