import ArcaCrypto

/// Adding a device to a circle (`arca sync join` on the new device, `arca sync approve` on a
/// member). Both screens show the same short authentication string, derived from both
/// device ids, so that the person approving checks that the device they approve is the one
/// in front of them; the member then sends a signed approval carrying the circle's members
/// and every epoch key it holds, each sealed to the new device (so the new device opens
/// records written before a rotation too). Layout of an approval, big-endian:
///
/// ```
/// "ARA2" | approver 32 | new device 32 | epoch u32 | u16 N | (device 32, removed-after u64 or 0)·N
/// | u16 K | (epoch u32, u32 length, that epoch's key sealed to the new device)·K
/// | signature 64 over "arca-sync-approval-v2" ‖ all before
/// ```
///
/// Version 1 ("ARA1", signed under "arca-sync-approval-v1") carried only the current epoch's
/// key, as `u32 length | sealed key` in place of the K keys; it is still accepted.
public enum Enrollment {
    static let magic: [UInt8] = Array("ARA2".utf8)
    static let signatureDomain: [UInt8] = Array("arca-sync-approval-v2".utf8)
    static let magicV1: [UInt8] = Array("ARA1".utf8)
    static let signatureDomainV1: [UInt8] = Array("arca-sync-approval-v1".utf8)

    /// Six decimal digits both devices show: BLAKE2b of the two ids in order, so neither
    /// side alone chooses it. A person compares them before approving.
    public static func shortAuthenticationString(_ a: DeviceID, _ b: DeviceID) -> String {
        let (first, second) = a < b ? (a, b) : (b, a)
        let digest = Digest.of(Array("arca-sync-sas".utf8) + first.bytes + second.bytes).bytes
        let number = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } % 1_000_000
        let digits = String(number)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// A member's signed approval of `device`: adds it to the member's circle and seals every
    /// epoch key the member holds to it.
    public static func approve(_ device: DeviceID, circle: inout Circle, signer: SigningKey) throws -> [UInt8] {
        circle.approve(device)
        return try sign(magic, signatureDomain, naming: device, circle: circle, signer: signer)
    }

    /// The approval layout under `kind` (its magic) and `domain`, every epoch key sealed to `device`.
    static func sign(_ kind: [UInt8], _ domain: [UInt8], naming device: DeviceID, circle: Circle, signer: SigningKey)
        throws -> [UInt8]
    {
        var w = ByteWriter()
        w.raw(kind)
        w.raw(signer.publicKey)
        w.raw(device.bytes)
        w.u32(circle.currentEpoch)
        let members = circle.members.values.sorted { $0.device < $1.device }
        w.u16(UInt16(members.count))
        for m in members {
            w.raw(m.device.bytes)
            w.u64(m.removedAfter.map { $0 + 1 } ?? 0)  // 0: a member; n + 1: removed after n
        }
        let epochs = circle.epochs
        w.u16(UInt16(epochs.count))
        for epoch in epochs {
            w.u32(epoch)
            w.lengthPrefixed(try SealedKeyBox.seal(circle.key(epoch: epoch), to: device.bytes))
        }
        w.raw(try signer.sign(domain + w.bytes))
        return w.bytes
    }

    /// On the new device: checks that `approval` is signed by `approver` (the member whose
    /// string the person compared), names this device, and opens the epoch keys.
    public static func accept(_ approval: [UInt8], from approver: DeviceID, as device: SigningKey) throws -> Circle {
        try open(approval, from: approver, as: device, recovery: false)
    }

    /// Checks and opens an approval (`recovery` false: "ARA2" or "ARA1", naming a member) or a
    /// recovery seal (`recovery` true: "ARK1", naming the recovery key's identity, no member).
    static func open(_ approval: [UInt8], from approver: DeviceID, as device: SigningKey, recovery: Bool) throws
        -> Circle
    {
        guard approval.count > SigningKey.signatureLength, approval.count <= 1 << 20 else {
            throw SyncError.malformed("approval length")
        }
        let signed = Array(approval.dropLast(SigningKey.signatureLength))
        var r = ByteReader(signed)
        let version = try r.raw(4, "magic")
        let domains =
            recovery
            ? [RecoverySeal.magic: RecoverySeal.signatureDomain]
            : [magic: signatureDomain, magicV1: signatureDomainV1]
        guard let domain = domains[version] else {
            throw SyncError.malformed(recovery ? "not a recovery seal" : "not an approval")
        }
        let signer = try DeviceID(r.raw(32, "approver"))
        guard signer == approver,
            SigningKey.verify(
                Array(approval.suffix(SigningKey.signatureLength)),
                of: domain + signed, publicKey: approver.bytes)
        else { throw SyncError.forged(signer) }
        let named = try DeviceID(r.raw(32, "device"))
        guard named.bytes == device.publicKey else { throw SyncError.malformed("the approval names another device") }
        let epoch = try r.u32("epoch")
        let count = Int(try r.u16("member count"))
        var members: [(DeviceID, UInt64)] = []
        for _ in 0..<count { members.append((try DeviceID(r.raw(32, "member")), try r.u64("removed after"))) }
        var sealed: [UInt32: [UInt8]] = [:]
        if version == magicV1 {
            sealed[epoch] = try r.lengthPrefixed("sealed key", limit: 1024)
        } else {
            for _ in 0..<Int(try r.u16("key count")) {
                let e = try r.u32("key epoch")
                guard e <= epoch, sealed[e] == nil else { throw SyncError.malformed("approval key epochs") }
                sealed[e] = try r.lengthPrefixed("sealed key", limit: 1024)
            }
        }
        try r.expectEnd("approval")
        var keys: [UInt32: SecretBytes] = [:]
        for (e, box) in sealed {
            do { keys[e] = try SealedKeyBox.open(box, with: device) } catch {
                throw SyncError.undecryptable(signer, seq: 0)
            }
        }
        guard let key = keys[epoch] else { throw SyncError.malformed("the approval leaves out the current key") }
        var circle = Circle(devices: [], epoch: epoch, key: key)
        for (e, k) in keys where e != epoch { circle.addEpochKey(k, epoch: e) }
        for (member, removed) in members {
            circle.approve(member)
            if removed > 0 { try circle.remove(member, lastAccepted: removed - 1) }
        }
        guard recovery || circle.activeDevices.contains(named), circle.activeDevices.contains(signer) else {
            throw SyncError.malformed("the approval's members leave out the approver or this device")
        }
        return circle
    }
}
