// A real arcad for the library tests: one per test process, started on first
// use with a temporary state directory and socket, with a vault enrolled for
// the caller (root), and the library's default socket (for `SecItem…`) aimed
// at it. At exit the vault is locked (so no test secret stays in root's kernel
// keyring) and arcad stopped.
import Arca
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import ArcaTestSupport
import Foundation
import Synchronization

/// The shared arcad of this test process.
public enum LiveArcad {
    /// The socket of the shared arcad (started on first use).
    public static func socketPath() throws -> String {
        try shared.get().socket
    }

    /// Starts another arcad with an empty state directory (no vault: every item
    /// request is answered "locked"), for tests of the locked state that must not
    /// disturb the shared one. Stopped at exit.
    public static func startWithoutVault() throws -> String {
        try start(enroll: false).socket
    }

    private static let started = Mutex<[ArcadProcess]>([])
    private static let shared: Result<Instance, Error> = Result {
        let instance = try start(enroll: true)
        ItemStore.defaultSocketOverride.withLock { $0 = instance.socket }
        return instance
    }

    private struct Instance {
        var socket: String
    }

    private static func start(enroll: Bool) throws -> Instance {
        guard getuid() == 0 else { throw TestSupportError("the live Keychain tests must run as root (arcad)") }
        let arcad = try ArcadProcess(prefix: "arca-lib")
        started.withLock { started in
            if started.isEmpty { atexit { LiveArcad.stopAll() } }
            started.append(arcad)
        }
        if enroll {
            // The key stands for a password-derived one; arcad cannot tell.
            let parameters = KeyDerivationParameters(
                opsLimit: 2, memoryLimit: 64 << 20, salt: (0..<16).map { _ in UInt8.random(in: 0...255) })
            let key = (0..<32).map { _ in UInt8.random(in: 0...255) }
            let reply = try arcad.send(.enroll(uid: 0, key: key, parameters: parameters))
            if case .error(let status, let message) = reply {
                throw TestSupportError("enroll failed: \(status) \(message)")
            }
        }
        return Instance(socket: arcad.socket)
    }

    private static func stopAll() {
        for arcad in started.withLock({ $0 }) { arcad.stop() }
    }
}
