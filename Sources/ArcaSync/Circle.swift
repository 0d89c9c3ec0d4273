import ArcaCrypto

/// The devices of one person's sync circle and the epoch keys this device holds.
///
/// A removed device keeps its place with a cut-off: its records up to the last one seen
/// when it was removed stay applied, any later one is refused. Removal rotates to a new
/// epoch whose key is sealed only to the remaining devices (and the recovery key).
public struct Circle: Sendable {
    /// A member and, once removed, the last of its records that is still accepted.
    public struct Member: Sendable, Hashable {
        /// The device.
        public var device: DeviceID
        /// nil while the device is a member; its last accepted sequence number once removed.
        public var removedAfter: UInt64?
    }

    /// Every device ever approved, removed ones included.
    public private(set) var members: [DeviceID: Member] = [:]
    /// The epoch keys this device holds, by epoch.
    private var epochKeys: [UInt32: SecretBytes] = [:]
    /// The epoch new records are sealed under.
    public private(set) var currentEpoch: UInt32 = 0

    /// A circle of `devices` with the key of epoch `epoch` (`arca sync init`: one device, a random key).
    public init(devices: [DeviceID], epoch: UInt32, key: SecretBytes) {
        for d in devices { members[d] = Member(device: d, removedAfter: nil) }
        epochKeys[epoch] = key
        currentEpoch = epoch
    }

    /// The devices that are members now.
    public var activeDevices: [DeviceID] { members.values.filter { $0.removedAfter == nil }.map(\.device).sorted() }

    /// Adds an approved device (a no-op for a member; a removed device stays removed).
    public mutating func approve(_ device: DeviceID) {
        if members[device] == nil { members[device] = Member(device: device, removedAfter: nil) }
    }

    /// Removes `device`, accepting its records up to `lastAccepted`. The remover then calls
    /// `rotate()` and publishes the new key with `sealedEpochKey()`.
    public mutating func remove(_ device: DeviceID, lastAccepted: UInt64) throws {
        guard members[device] != nil else { throw SyncError.unknownDevice(device) }
        members[device]?.removedAfter = lastAccepted
    }

    /// A new random epoch key that becomes current.
    @discardableResult
    public mutating func rotate() throws -> UInt32 {
        let next = currentEpoch + 1
        epochKeys[next] = try SecretBytes.random(count: 32)
        currentEpoch = next
        return next
    }

    /// Adds an epoch key received from another member (sealed to this device).
    public mutating func addEpochKey(_ key: SecretBytes, epoch: UInt32) {
        epochKeys[epoch] = key
        currentEpoch = max(currentEpoch, epoch)
    }

    /// The epochs whose keys this device holds, oldest first.
    public var epochs: [UInt32] { epochKeys.keys.sorted() }

    /// The key of `epoch`, or `SyncError.unknownEpoch`.
    public func key(epoch: UInt32) throws -> SecretBytes {
        guard let key = epochKeys[epoch] else { throw SyncError.unknownEpoch(epoch) }
        return key
    }

    /// Whether a record `seq` of `author` may be applied at all (before its signature is checked).
    func admit(author: DeviceID, seq: UInt64) throws {
        guard let member = members[author] else { throw SyncError.unknownDevice(author) }
        if let cutoff = member.removedAfter, seq > cutoff { throw SyncError.removedDevice(author, seq: seq) }
    }

    /// The current epoch key sealed to each active device (what `approve` and `remove` publish).
    public func sealedEpochKey() throws -> [DeviceID: [UInt8]] {
        let key = try key(epoch: currentEpoch)
        var out: [DeviceID: [UInt8]] = [:]
        for d in activeDevices { out[d] = try SealedKeyBox.seal(key, to: d.bytes) }
        return out
    }

    /// The current epoch key wrapped under a key derived from the vault's recovery key.
    public func epochKeyForRecovery(_ recoveryKey: SecretBytes) throws -> [UInt8] {
        try KeyWrap.wrap(try key(epoch: currentEpoch), with: recoveryKey, context: Self.recoveryContext(currentEpoch))
    }

    /// Unwraps an epoch key wrapped by `epochKeyForRecovery`.
    public static func epochKey(fromRecovery wrapped: [UInt8], recoveryKey: SecretBytes, epoch: UInt32) throws
        -> SecretBytes
    {
        do {
            return try KeyWrap.unwrap(wrapped, with: recoveryKey, context: recoveryContext(epoch))
        } catch {
            throw SyncError.backupUnreadable
        }
    }

    static func recoveryContext(_ epoch: UInt32) -> [UInt8] {
        var w = ByteWriter()
        w.raw(Array("arca-sync-recovery".utf8))
        w.u32(epoch)
        return w.bytes
    }
}
