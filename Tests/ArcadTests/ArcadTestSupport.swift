// Requests and keys shared by the suites that run the real arcad binary (ArcadProcess).
import ArcaCrypto
import ArcaProtocol
import ArcaTestSupport
import Foundation

let e2eParameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("0123456789abcdef".utf8))

func derive(_ password: String) throws -> [UInt8] {
    let secret = try Array(password.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    let key = try Argon2id.deriveKey(
        password: secret, parameters: KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: e2eParameters.salt))
    return key.withUnsafeBytes { Array($0) }
}

func add(
    _ uid: UInt32, _ service: String, _ account: String, _ secret: String,
    accessible: ArcaProtocol.Accessibility = .whenUnlocked
) -> Request {
    .add(
        AddRequest(
            vault: .user(uid: uid), itemClass: .genericPassword,
            attributes: [
                .service: .string(service), .account: .string(account),
                .accessible: .accessibility(accessible),
            ],
            secret: Array(secret.utf8)))
}

func get(_ uid: UInt32, _ service: String, _ account: String) -> Request {
    .copyMatching(
        vault: .user(uid: uid),
        query: Query(
            itemClass: .genericPassword, attributes: [.service: .string(service), .account: .string(account)],
            returnFlags: .data))
}

extension TestUser {
    /// Reads an item from the kernel as this user, in a pam_keyinit-like session.
    func kernelRead(_ description: String) throws -> String {
        try run([builtExecutable("arca-keyring-probe"), "read", "pam", description]).stdout
    }

    /// Runs arcad-probe as this user.
    func probe(_ socket: String, _ args: String..., stdin: String? = nil) throws -> String {
        try run([builtExecutable("arcad-probe"), socket] + args, stdin: stdin).stdout
    }
}

func hex(_ text: String) -> String {
    Array(text.utf8).map { String(format: "%02x", $0) }.joined()
}
