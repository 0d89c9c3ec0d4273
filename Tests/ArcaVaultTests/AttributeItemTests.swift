import ArcaCrypto
import Testing

@testable import ArcaVault

/// Secret Service attribute items: the dictionary round-trips, search is exact and
/// case-sensitive through the blind index, locked never reads as not found.
@Suite struct AttributeItemTests {
    static let unicode = [
        "xdg:schema": "org.example.Pass", "user": "Zoë 東京 🔑", "host": " spaced  out\t",
        "punct": "a=b;c,d'e\"f\\g",
    ]

    func add(
        _ vault: Vault, _ attributes: [String: String], label: String = "l", secret value: String = "s",
        replace: Bool = false
    ) throws -> (item: AttributeItem, replaced: Bool) {
        try vault.addAttributeItem(
            label: label, attributes: attributes, contentType: "text/plain", secret: secret(value), accessible: nil,
            replace: replace)
    }

    @Test func attributesLabelAndContentTypeRoundTrip() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let (added, replaced) = try vault.addAttributeItem(
            label: "Mail 📬", attributes: Self.unicode, contentType: "application/octet-stream", secret: secret(""),
            accessible: nil, replace: false)
        #expect(replaced == false)
        let item = try vault.attributeItem(added.reference, returnSecret: true)
        #expect(item.label == "Mail 📬")
        #expect(item.attributes == Self.unicode)
        #expect(item.contentType == "application/octet-stream")
        #expect(item.accessible == .afterFirstUnlock)
        #expect(item.secret?.count == 0)
        #expect(item.created > 1_700_000_000 && item.created == item.modified)
        // A Keychain item in the reserved group with a random 32-hex-digit account.
        let keychain = try vault.copyMatching(
            query({ $0.accessGroup = AttributeItem.accessGroup }) { $0.returnAttributes = true })
        #expect(keychain.count == 1)
        #expect(keychain.first?.attributes?.account?.count == 32)
        #expect(keychain.first?.attributes?.secretAttributes == Self.unicode)
    }

    @Test func randomAccountIsThirtyTwoLowercaseHexDigitsAndFresh() {
        let hex = Set("0123456789abcdef")
        var seen = Set<String>()
        var digitsSeen = Set<Character>()
        for _ in 0..<200 {
            let account = Vault.randomAccount()
            #expect(account.count == 32)
            #expect(account.utf8.count == 32)
            #expect(account.allSatisfy(hex.contains))
            digitsSeen.formUnion(account)
            seen.insert(account)
        }
        #expect(seen.count == 200)
        // 6,400 digits drawn: every one of the 16 shows up (a table slip would leave some out).
        #expect(digitsSeen == hex)
    }

    @Test func searchIsExactAndCaseSensitiveAndAllowsExtraAttributes() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let a = try add(vault, ["service": "git", "user": "Alice"]).item.reference
        let b = try add(vault, ["service": "git", "user": "alice"]).item.reference
        let c = try add(vault, ["service": "gitx", "user": "Alice", "extra": "1"]).item.reference
        let d = try add(vault, Self.unicode).item.reference
        func refs(_ q: [String: String]) throws -> [PersistentReference] {
            try vault.searchAttributeItems(q).unlocked.map(\.reference)
        }
        #expect(try refs(["service": "git"]) == [a, b])
        #expect(try refs(["user": "Alice"]) == [a, c])
        #expect(try refs(["user": "ALICE"]) == [])
        #expect(try refs(["service": "git", "user": "alice"]) == [b])
        #expect(try refs(["service": "gi"]) == [])
        #expect(try refs(["extra": "1"]) == [c])
        #expect(try refs([:]) == [a, b, c, d])
        #expect(try refs(["host": " spaced  out\t"]) == [d])
        #expect(try refs(["host": "spaced out"]) == [])
        #expect(try refs(["punct": "a=b;c,d'e\"f\\g", "user": "Zoë 東京 🔑"]) == [d])
        // A name and value that concatenate the same way are different pairs.
        let e = try add(vault, ["ab": "c"]).item.reference
        #expect(try refs(["a": "bc"]) == [])
        #expect(try refs(["ab": "c"]) == [e])
        // Keychain items never appear.
        try vault.add(.genericPassword, attributes: genp("git", "Alice"), secret: secret("k"))
        #expect(try refs([:]).count == 5)
    }

    @Test func referencesAreTheMatchesOfASearch() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let a = try add(vault, ["service": "git", "user": "Alice"]).item.reference
        let b = try add(vault, ["service": "git", "user": "alice"]).item.reference
        _ = try add(vault, ["ab": "c"])
        _ = try add(vault, Self.unicode)
        try vault.add(.genericPassword, attributes: genp("git", "Alice"), secret: secret("k"))
        let queries: [[String: String]] = [
            ["service": "git"], ["user": "Alice"], ["user": "ALICE"], [:], ["service": "git", "user": "x"],
            ["a": "bc"], ["ab": "c"], ["ab": ""], ["host": " spaced  out\t"], Self.unicode,
            ["punct": "a=b;c,d'e\"f\\g", "user": "Zoë 東京 🔑"], ["punct": "a=b;c,d'e\"f\\g", "user": "Zoë"],
        ]
        for query in queries {
            let found = try vault.searchAttributeReferences(query)
            #expect(found.unlocked == (try vault.searchAttributeItems(query).unlocked.map(\.reference)))
            #expect(found.locked.isEmpty)
        }
        #expect(try vault.searchAttributeReferences([:]).unlocked.prefix(2) == [a, b])
        #expect(try vault.searchAttributeReferences(["ab": "c"]).unlocked.count == 1)
        #expect(try vault.searchAttributeReferences(Self.unicode).unlocked.count == 1)
    }

    @Test func aRarePairWithCommonOnesFindsExactlyItsItemsInInsertionOrder() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        // Pairs shared by every item, by every third one, and by one alone: the search is
        // driven by the rarest list whatever the order of the pairs, and still in insertion order.
        var refs: [PersistentReference] = []
        for i in 0..<90 {
            var attributes = ["bench": "1", "id": String(i)]
            if i % 3 == 0 { attributes["third"] = "yes" }
            refs.append(try add(vault, attributes).item.reference)
        }
        func found(_ q: [String: String]) throws -> [PersistentReference] {
            let references = try vault.searchAttributeReferences(q).unlocked
            #expect(references == (try vault.searchAttributeItems(q).unlocked.map(\.reference)))
            return references
        }
        #expect(try found(["bench": "1", "id": "57"]) == [refs[57]])
        #expect(try found(["id": "57", "bench": "1", "third": "yes"]) == [refs[57]])
        #expect(try found(["id": "58", "bench": "1", "third": "yes"]) == [])
        #expect(try found(["bench": "1", "id": "none"]) == [])
        #expect(try found(["bench": "1", "third": "yes"]) == stride(from: 0, to: 90, by: 3).map { refs[$0] })
        #expect(try found(["bench": "1"]) == refs)
        #expect(try found(["bench": "2", "third": "yes"]) == [])
    }

    @Test func aSearchOf64PairsIsA64TableJoinThatWorksAnd65PairsIsRefused() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        // SQLite joins at most 64 tables: 64 pairs are exactly that many (one per pair).
        let all = Dictionary(uniqueKeysWithValues: (0..<64).map { ("k\($0)", "v\($0)") })
        var other = all
        other["k63"] = "different"
        let item = try add(vault, all).item.reference
        _ = try add(vault, other)
        #expect(try vault.searchAttributeReferences(all).unlocked == [item])
        #expect(try vault.searchAttributeItems(all).unlocked.map(\.reference) == [item])
        var missing = all
        missing["k0"] = "none"
        #expect(try vault.searchAttributeReferences(missing).unlocked == [])
        // 65 pairs: the vault's own limit, a clear error before any SQL.
        var tooMany = all
        tooMany["k64"] = "v64"
        #expect(throws: VaultError.param("at most 64 attributes per item")) {
            try vault.searchAttributeReferences(tooMany)
        }
        #expect(throws: VaultError.param("at most 64 attributes per item")) {
            try vault.searchAttributeItems(tooMany)
        }
    }

    @Test func collectionLabelIsKeptInTheFile() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        #expect(try vault.collectionLabel() == "Login")
        try vault.setCollectionLabel("Pérsonal 🔑")
        #expect(try Vault.open(at: dir.file("vault.db")).collectionLabel() == "Pérsonal 🔑")
        #expect(
            vaultError { try vault.setCollectionLabel(String(repeating: "x", count: 16 << 10 + 1)) }
                == .param("a collection label is at most 16 KiB"))
    }

    @Test func replaceUpdatesTheItemWithEqualAttributesOnly() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let first = try add(vault, ["k": "v"], secret: "one").item.reference
        let twin = try add(vault, ["k": "v"], secret: "two", replace: false)
        #expect(twin.replaced == false && twin.item.reference != first)
        let wider = try add(vault, ["k": "v", "x": "y"], secret: "three").item.reference
        let replaced = try add(vault, ["k": "v"], label: "new", secret: "four", replace: true)
        #expect(replaced.replaced == true && replaced.item.reference == first)
        #expect(replaced.item.label == "new")
        #expect(text(try vault.attributeItem(first, returnSecret: true).secret) == "four")
        #expect(text(try vault.attributeItem(wider, returnSecret: true).secret) == "three")
        let fresh = try add(vault, ["k": "other"], replace: true)
        #expect(fresh.replaced == false)
        #expect(try vault.searchAttributeItems([:]).unlocked.count == 4)
    }

    @Test func updateRetagsAndDeleteRemovesTags() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let ref = try add(vault, ["k": "v"]).item.reference
        let before = try vault.attributeItem(ref)
        let updated = try vault.updateAttributeItem(ref, attributes: ["k": "w"], secret: secret("new"))
        #expect(updated.attributes == ["k": "w"] && updated.label == "l" && updated.created == before.created)
        #expect(updated.modified >= before.modified)
        #expect(try vault.searchAttributeItems(["k": "v"]).unlocked.isEmpty)
        #expect(
            try vault.searchAttributeItems(["k": "w"], returnSecrets: true).unlocked.map { text($0.secret) }
                == ["new"])
        try vault.deleteAttributeItem(ref)
        #expect(vaultError { _ = try vault.attributeItem(ref) } == .itemNotFound)
        #expect(vaultError { try vault.deleteAttributeItem(ref) } == .itemNotFound)
        #expect(try vault.db.statement("SELECT count(*) FROM attr_tags").int0() == 0)
    }

    @Test func lockedItemsComeBackAsLockedNeverAsNotFound() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let afu = try add(vault, ["k": "v"]).item.reference
        let wu = try vault.addAttributeItem(
            label: "w", attributes: ["k": "v", "w": "1"], contentType: "", secret: secret("x"),
            accessible: .whenUnlocked,
            replace: false
        ).item.reference
        vault.lock(Accessibility.whenUnlockedClasses)
        let partial = try vault.searchAttributeItems(["k": "v"])
        #expect(partial.unlocked.map(\.reference) == [afu])
        #expect(partial.locked == [wu])
        #expect(vaultError { _ = try vault.attributeItem(wu) } == .locked)
        // Replacing must not add a twin of an item it cannot see.
        #expect(vaultError { _ = try add(vault, ["k": "v", "w": "1"], replace: true) } == .locked)
        #expect(try add(vault, ["k": "v"], secret: "new", replace: true).replaced == true)
        vault.lockAll()
        #expect(vaultError { _ = try vault.searchAttributeItems(["k": "v"]) } == .locked)
        #expect(vaultError { _ = try vault.attributeItem(afu) } == .locked)
        #expect(vaultError { try vault.deleteAttributeItem(afu) } == .locked)
    }

    @Test func tooManyOrTooLongAttributesAreRefused() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        var many: [String: String] = [:]
        for i in 0...Vault.maximumAttributeCount { many["k\(i)"] = "v" }
        #expect(vaultError { _ = try add(vault, many) } == .param("at most 64 attributes per item"))
        let long = String(repeating: "x", count: Vault.maximumAttributeLength + 1)
        #expect(
            vaultError { _ = try add(vault, ["k": long]) } == .param("an attribute name or value is longer than 16 KiB")
        )
        #expect(try vault.itemCount() == 0)
    }
}

extension Statement {
    /// The first column of the first row.
    func int0() throws -> Int64 {
        defer { finish() }
        return try step() ? int(0) : -1
    }
}
