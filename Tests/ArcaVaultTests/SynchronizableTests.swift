import ArcaCrypto
import Testing

@testable import ArcaVault

/// A synchronizable item leaves the machine; a ThisDeviceOnly one never does.
/// Like Apple's SecItemAdd/SecItemUpdate, the vault refuses the pair with
/// `param` (errSecParam, -50), whichever side of it a change sets, and stores nothing.
@Suite struct SynchronizableTests {
    static let thisDeviceOnly: [Accessibility] = [
        .whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly, .whenPasscodeSetThisDeviceOnly,
    ]

    @Test(arguments: thisDeviceOnly)
    func addingASynchronizableThisDeviceOnlyItemIsRefused(_ accessible: Accessibility) throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        let error = vaultError {
            try vault.add(
                .genericPassword,
                attributes: genp("mail", "alice") {
                    $0.synchronizable = true
                    $0.accessible = accessible
                }, secret: secret("s"))
        }
        #expect(error == .param("a synchronizable item cannot have a ThisDeviceOnly accessibility"))
        #expect(error?.status.rawValue == -50)
        #expect(try vault.itemCount() == 0)
        // Each half alone is fine.
        try vault.add(
            .genericPassword, attributes: genp("mail", "alice") { $0.synchronizable = true }, secret: secret("s"))
        try vault.add(
            .genericPassword, attributes: genp("mail", "bob") { $0.accessible = accessible }, secret: secret("s"))
        #expect(try vault.itemCount() == 2)
    }

    @Test func anUpdateThatWouldMakeThePairIsRefusedAndChangesNothing() throws {
        let dir = try TempDir()
        let (vault, _) = try makeVault(dir)
        try vault.add(
            .genericPassword,
            attributes: genp("mail", "local") {
                $0.accessible = .afterFirstUnlockThisDeviceOnly
            }, secret: secret("l"))
        try vault.add(
            .genericPassword, attributes: genp("mail", "synced") { $0.synchronizable = true }, secret: secret("s"))
        let refusal = VaultError.param("a synchronizable item cannot have a ThisDeviceOnly accessibility")

        // Making a ThisDeviceOnly item synchronizable.
        #expect(
            vaultError {
                try vault.update(query({ $0.account = "local" }), changes: ItemAttributes { $0.synchronizable = true })
            } == refusal)
        // Giving a synchronizable item a ThisDeviceOnly class.
        #expect(
            vaultError {
                try vault.update(
                    query({ $0.account = "synced" }) { $0.synchronizable = .yes },
                    changes: ItemAttributes { $0.accessible = .whenUnlockedThisDeviceOnly })
            } == refusal)
        // Both in one change.
        #expect(
            vaultError {
                try vault.update(
                    query({ $0.account = "synced" }) { $0.synchronizable = .yes },
                    changes: ItemAttributes {
                        $0.accessible = .whenUnlockedThisDeviceOnly
                        $0.synchronizable = true
                    })
            } == refusal)

        let all = try vault.copyMatching(
            query({ $0.service = "mail" }) {
                $0.synchronizable = .any
                $0.matchLimit = .all
                $0.returnAttributes = true
            })
        let stored = Dictionary(
            uniqueKeysWithValues: all.compactMap { r in
                r.attributes.map {
                    ($0.account ?? "", "\($0.accessible.map { "\($0)" } ?? "-") sync=\($0.synchronizable ?? false)")
                }
            })
        #expect(stored == ["local": "afterFirstUnlockThisDeviceOnly sync=false", "synced": "whenUnlocked sync=true"])
    }
}
