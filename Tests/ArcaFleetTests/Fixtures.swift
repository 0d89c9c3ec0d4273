import ArcaCrypto
import Foundation

@testable import ArcaFleet

/// An admin key, a host's keys, a group key and signed records built from them.
struct Fleet {
    let admin: AdminKey
    let host: HostKeys
    let otherHost: HostKeys
    let groupKey: SecretBytes
    let now: Int64 = 1_800_000_000

    init() throws {
        admin = try AdminKey(seed: try SecretBytes.random(count: 32))
        host = try HostKeys(stored: try HostKeys.generateStored())
        otherHost = try HostKeys(stored: try HostKeys.generateStored())
        groupKey = try SecretBytes.random(count: 32)
    }

    var verifier: HostVerifier { HostVerifier(host: "h1", adminKey: admin.publicKey, keys: host) }

    func item(_ version: UInt64, secret: String, id: String = "00ff", seed: SecretBytes? = nil) throws -> [UInt8] {
        var record = ItemRecord(
            id: id, version: version, service: "db", account: "app", group: "web", epoch: 1, users: ["postgres"],
            groups: [], units: ["app.service:pw"], wrappedKey: Data(), ciphertext: Data())
        var bytes = Array(secret.utf8)
        try ItemSealing.seal(try SecretBytes(consuming: &bytes), into: &record, groupKey: groupKey)
        return try SignedRecord.sign(record, kind: .item, seed: seed ?? admin.seed).encoded()
    }

    func groupKeyRecord(for keys: HostKeys? = nil, host name: String = "h1", epoch: UInt64 = 1) throws -> [UInt8] {
        let target = HostRecord(
            host: name, signPublicKey: Data((keys ?? host).signPublicKey),
            boxPublicKey: Data((keys ?? host).boxPublicKey),
            groups: ["web"])
        let sealed = try ItemSealing.sealGroupKey(groupKey, group: "web", epoch: epoch, to: target)
        return try SignedRecord.sign(sealed, kind: .groupKey, seed: admin.seed).encoded()
    }

    func manifest(
        seq: UInt64, entries: [ManifestEntry], host: String = "h1", notAfter: Int64? = nil,
        seed: SecretBytes? = nil
    ) throws -> [UInt8] {
        let manifest = Manifest(host: host, seq: seq, notAfter: notAfter ?? now + 3600, entries: entries)
        return try SignedRecord.sign(manifest, kind: .manifest, seed: seed ?? admin.seed).encoded()
    }
}

extension SecretBytes {
    var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// The envelope with its body changed and the signature kept.
func alterBody(_ envelope: [UInt8], _ change: (inout String) -> Void) throws -> [UInt8] {
    var record = try SignedRecord.decode(envelope, what: "test")
    var body = String(decoding: record.body, as: UTF8.self)
    change(&body)
    record.body = Data(body.utf8)
    return try record.encoded()
}
