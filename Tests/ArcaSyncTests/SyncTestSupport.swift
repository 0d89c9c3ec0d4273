import ArcaCrypto
import Synchronization

@testable import ArcaSync

/// A clock source the test sets by hand.
// @unchecked: its only state is a Mutex.
final class ManualClock: ClockSource, @unchecked Sendable {
    private let millis: Mutex<UInt64>
    init(_ start: UInt64) { millis = Mutex(start) }
    func set(_ value: UInt64) { millis.withLock { $0 = value } }
    func nowMillis() -> UInt64 { millis.withLock { $0 } }
}

/// A device of a test circle: a deterministic key pair and a manual clock.
struct TestDevice {
    let signer: SigningKey
    let clock: ManualClock
    var replica: SyncReplica
    var id: DeviceID { replica.device }
}

enum Fixture {
    /// 32 bytes of `byte`, as a secret.
    static func secret(_ byte: UInt8, count: Int = 32) -> SecretBytes {
        var b = [UInt8](repeating: byte, count: count)
        return try! SecretBytes(consuming: &b)
    }

    static func signer(_ n: UInt8) -> SigningKey { try! SigningKey(seed: secret(n)) }

    /// Devices seeded 1, 2, 3… in one circle with epoch 0 key 0xEE…, clocks at `start`.
    static func circle(_ count: Int, start: UInt64 = 1_000_000) -> [TestDevice] {
        let signers = (1...count).map { signer(UInt8($0)) }
        let ids = signers.map { try! DeviceID($0.publicKey) }
        return signers.map { s in
            let clock = ManualClock(start)
            let replica = try! SyncReplica(
                signer: s, circle: Circle(devices: ids, epoch: 0, key: secret(0xEE)),
                clock: HybridLogicalClock(source: clock))
            return TestDevice(signer: s, clock: clock, replica: replica)
        }
    }

    static func body(_ attributes: String, _ secretText: String?) -> RecordBody {
        var secret: SecretBytes?
        if let text = secretText {
            var bytes = Array(text.utf8)
            secret = try! SecretBytes(consuming: &bytes)
        }
        return RecordBody(attributes: Array(attributes.utf8), secret: secret)
    }

    /// The secret's bytes, for comparisons in tests only.
    static func text(_ secret: SecretBytes?) -> String? {
        secret.map { s in s.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }
}

extension ItemVersion {
    var attributesText: String { String(decoding: body.attributes, as: UTF8.self) }
}
