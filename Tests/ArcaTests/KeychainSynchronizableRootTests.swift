import ArcaLibTestSupport
import Foundation
import Testing

@testable import Arca

/// A synchronizable Keychain of a ThisDeviceOnly class writes nothing: every
/// write throws errSecParam (-50), as on Apple platforms; reads are unaffected.
@Suite struct KeychainSynchronizableRootTests {
    @Test(arguments: [
        Accessibility.whenUnlockedThisDeviceOnly, .afterFirstUnlockThisDeviceOnly,
        .whenPasscodeSetThisDeviceOnly,
    ])
    func synchronizableThisDeviceOnlyWritesAreParamErrors_root(_ accessibility: Accessibility) throws {
        let k = Keychain(service: "arca.test.sync.\(UUID().uuidString)").socketPath(try LiveArcad.socketPath())
            .synchronizable(true)
        let refused = k.accessibility(accessibility)
        #expect(status { () throws(KeychainError) in try refused.set("v", key: "new") } == -50)
        #expect(try k.get("new") == nil)
        // An existing synchronizable item cannot be moved to a ThisDeviceOnly class either.
        try k.set("v1", key: "kept")
        #expect(status { () throws(KeychainError) in try refused.set("v2", key: "kept") } == -50)
        #expect(try k.get("kept") == "v1")
        #expect(try k.attributes(for: "kept")?.accessibility == .whenUnlocked)
        try k.removeAll()
    }

    /// The OSStatus `body` threw; 0 when it succeeded.
    func status(_ body: () throws(KeychainError) -> Void) -> OSStatus {
        do {
            try body()
            return 0
        } catch {
            return error.status
        }
    }
}
