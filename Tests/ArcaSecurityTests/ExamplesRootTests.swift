import ArcaLibTestSupport
import ArcaSecurity
import Foundation
import Testing

@testable import ArcaExamples

/// The three ported wrappers of `Examples/`, unchanged but for the import,
/// against a real arcad.
@Suite struct ExamplesRootTests {
    init() throws { _ = try LiveArcad.socketPath() }

    @Test func stringWrapperSavesReadsAndDeletes_root() {
        let keychain = StringKeychain(service: "arca.example1.\(UUID().uuidString)")
        #expect(keychain.read(forKey: "token") == nil)
        #expect(keychain.readStatus(forKey: "token") == errSecItemNotFound)
        #expect(keychain.save("abc", forKey: "token"))
        #expect(keychain.read(forKey: "token") == "abc")
        #expect(keychain.save("def", forKey: "token"))
        #expect(keychain.read(forKey: "token") == "def")
        #expect(keychain.readStatus(forKey: "token") == errSecSuccess)
        #expect(keychain.delete(forKey: "token"))
        #expect(keychain.read(forKey: "token") == nil)
        #expect(keychain.delete(forKey: "token"))
    }

    @Test func archivingWrapperRoundTripsObjects_root() {
        let keychain = ArchivingKeychain(serviceName: "arca.example2.\(UUID().uuidString)")
        let settings = NSDictionary(dictionary: ["theme": "dark", "size": NSNumber(value: 14)])
        #expect(keychain.setObject(settings, forKey: "settings"))
        #expect(keychain.setObject(NSArray(array: ["a", "b"]), forKey: "list"))
        let restored = keychain.object(forKey: "settings") as? NSDictionary
        #expect(restored?["theme"] as? String == "dark")
        #expect((restored?["size"] as? NSNumber)?.intValue == 14)
        #expect((keychain.object(forKey: "list") as? NSArray)?.count == 2)
        // Saving again deletes then adds.
        #expect(keychain.setObject(NSString(string: "replaced"), forKey: "settings"))
        #expect(keychain.object(forKey: "settings") as? String == "replaced")
        #expect(keychain.removeObject(forKey: "settings"))
        #expect(keychain.removeObject(forKey: "list"))
        #expect(keychain.object(forKey: "settings") == nil)
    }

    @Test func accessGroupWrapperUpdatesAndSeparatesGroups_root() throws {
        let service = "arca.example3.\(UUID().uuidString)"
        let teamA = SharedKeychain(service: service, accessGroup: "com.example.team-a")
        let teamB = SharedKeychain(service: service, accessGroup: "com.example.team-b")
        #expect(throws: SharedKeychain.KeychainError.noPassword) { try teamA.readPassword(account: "bob") }
        try teamA.savePassword("first", account: "bob")
        try teamA.savePassword("second", account: "bob")  // the update path
        try teamA.savePassword("x", account: "carol")
        try teamB.savePassword("other", account: "bob")
        #expect(try teamA.readPassword(account: "bob") == "second")
        #expect(try teamB.readPassword(account: "bob") == "other")
        #expect(try teamA.accounts() == ["bob", "carol"])
        #expect(try teamB.accounts() == ["bob"])
        #expect(try SharedKeychain(service: service).accounts() == ["bob", "bob", "carol"])
        try teamA.deleteItem(account: "bob")
        try teamA.deleteItem(account: "carol")
        try teamB.deleteItem(account: "bob")
        #expect(try teamA.accounts() == [])
        #expect(try teamB.accounts() == [])
    }
}
