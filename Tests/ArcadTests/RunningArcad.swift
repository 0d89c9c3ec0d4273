import ArcaCrypto
import ArcaProtocol
import ArcaTestSupport
import Foundation

/// The real arcad binary, started for one test with a temporary state directory
/// and socket, stopped (and its parked keys and rings dropped) afterwards.
final class RunningArcad {
    let directory: String
    let socket: String
    private(set) var process: Process?

    let configPath: String

    /// `config` is the text of an arca.conf; `socketSubdirectory` puts the socket in a
    /// directory arcad has to create.
    init(config: String = "", socketSubdirectory: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("arcad-e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + (socketSubdirectory.map { "/\($0)" } ?? "") + "/arcad.sock"
        configPath = directory + "/arca.conf"
        FileManager.default.createFile(atPath: configPath, contents: Data(config.utf8))
        try start()
    }

    /// Starts arcad and waits until its socket answers.
    func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: builtExecutable("arcad"))
        p.arguments = ["--foreground", "--config", configPath, "--state-dir", directory + "/state", "--socket", socket]
        p.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try p.run()
        process = p
        for _ in 0..<200 {
            if let client = try? ArcadClient(path: socket, timeoutMilliseconds: 1000),
               (try? client.send(.status(uid: nil))) != nil { return }
            usleep(20_000)
        }
        throw TestSupportError("arcad did not start")
    }

    /// SIGKILL, as a crash would.
    func kill9() {
        guard let p = process else { return }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        process = nil
    }

    func send(_ request: Request) throws -> Reply {
        try ArcadClient(path: socket, timeoutMilliseconds: 10_000).send(request)
    }

    func stop() {
        _ = try? send(.lockAll)
        kill9()
        removeParkedKeys(stateDirectory: directory + "/state")
        try? FileManager.default.removeItem(atPath: directory)
    }
}

let e2eParameters = KeyDerivationParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: Array("0123456789abcdef".utf8))

func derive(_ password: String) throws -> [UInt8] {
    let secret = try Array(password.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    let key = try Argon2id.deriveKey(
        password: secret, parameters: KDFParameters(opsLimit: 1, memoryLimit: 64 << 20, salt: e2eParameters.salt))
    return key.withUnsafeBytes { Array($0) }
}

func add(_ uid: UInt32, _ service: String, _ account: String, _ secret: String,
         accessible: ArcaProtocol.Accessibility = .whenUnlocked) -> Request {
    .add(AddRequest(vault: .user(uid: uid), itemClass: .genericPassword,
                    attributes: [.service: .string(service), .account: .string(account),
                                 .accessible: .accessibility(accessible)],
                    secret: Array(secret.utf8)))
}

func get(_ uid: UInt32, _ service: String, _ account: String) -> Request {
    .copyMatching(vault: .user(uid: uid), query: Query(
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
