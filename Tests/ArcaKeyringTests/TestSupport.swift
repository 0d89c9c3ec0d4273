import ArcaCrypto
import ArcaTestSupport
import Foundation
import Testing

@testable import ArcaKeyring

/// Fails loudly (never skips) when the tests cannot run: they need root and a
/// kernel with key management.
func requireRootAndKeyring() throws {
    try #require(getuid() == 0, "the keyring tests must run as root (they create users and root-owned keys)")
    let hasKeyring: Bool
    do {
        _ = try KeySerial.threadKeyring.resolve(create: true)
        hasKeyring = true
    } catch {
        hasKeyring = false
    }
    try #require(hasKeyring, "this kernel has no keyring support")
}

/// The output of a finished command.
let probePath: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("arca-keyring-probe").path
}()

/// A throwaway account, created with useradd and removed with userdel.
extension TestUser {
    /// Runs the keyring probe as this user; its one line of output.
    func probe(_ args: String...) throws -> String {
        try run([probePath] + args).stdout
    }
}

/// Two throwaway users; their keyrings are purged and the users removed afterwards.
/// `farUids`: uids far above useradd's range, which no other test reuses while the
/// kernel still counts keys of its last owner (tests that compare a uid's key counts).
func withTwoUsers(farUids: Bool = false, _ body: (TestUser, TestUser) throws -> Void) throws {
    try requireRootAndKeyring()
    let purge = { (user: TestUser) in _ = KeyringLayout().purge(user: user.uid) }
    try withThrowawayUsers(2, prefix: "arcakt", farUids: farUids, cleanup: purge) { users in
        try body(users[0], users[1])
    }
}

func testItem(service: String, account: String) throws -> KeyringItem {
    let key = KeyringItemKey.genericPassword(GenericPasswordKey(service: service, account: account))
    return KeyringItem(key: key, secret: try secret("secret-\(account)"))
}

func secret(_ text: String) throws -> SecretBytes {
    var bytes = Array(text.utf8)
    return try SecretBytes(consuming: &bytes)
}

/// Lower-case hex, as the probe prints secrets.
func hex(_ text: String) -> String {
    text.utf8.map { String(format: "%02x", $0) }.joined()
}

/// The serials present in /proc/keys (as root sees them).
func procKeysSerials() throws -> Set<Int32> {
    // procfs files have size 0: read them to EOF, not by their stat size.
    let text = try #require(ProcFile.read("/proc/keys"))
    var serials = Set<Int32>()
    for line in text.split(separator: "\n") {
        if let word = line.split(separator: " ").first, let value = UInt32(word, radix: 16) {
            serials.insert(Int32(bitPattern: value))
        }
    }
    return serials
}
