import ArcaCrypto
import FoundationEssentials

/// The kinds of signed record in etcd. The kind is part of the signed message, so a
/// record signed as one kind never verifies as another (an item is not a manifest).
public enum RecordKind: String, Codable, Sendable {
    /// `hosts/<h>/join`: a host's public keys, signed by the host itself.
    case join
    /// `hosts/<h>/pub`: an approved host and its groups, signed by the admin.
    case host
    /// `groups/<g>/<epoch>/<h>`: a group key sealed to one host, signed by the admin.
    case groupKey
    /// `items/<id>/<version>`: a sealed secret with its grants, signed by the admin.
    case item
    /// `hosts/<h>/manifest`: what the host must serve, signed by the admin.
    case manifest
    /// `hosts/<h>/ack`: what the host applied, signed by the host.
    case ack
    /// `head`: the fleet's write counter, signed by the admin; every admin write bumps it.
    case head
}

/// A signed record as stored in etcd: the JSON body, its kind and an Ed25519 signature
/// over `"arca-fleet-v1\0" + kind + "\0" + body`.
public struct SignedRecord: Codable, Sendable, Equatable {
    /// The kind the signature covers.
    public var kind: RecordKind
    /// The body, JSON bytes (base64 in the envelope).
    public var body: Data
    /// The detached Ed25519 signature.
    public var signature: Data

    static func message(kind: RecordKind, body: [UInt8]) -> [UInt8] {
        Array("arca-fleet-v1\0\(kind.rawValue)\0".utf8) + body
    }

    /// Signs `value` as `kind` with `seed` (an Ed25519 seed).
    public static func sign<T: Encodable>(_ value: T, kind: RecordKind, seed: SecretBytes) throws -> SignedRecord {
        let body = try Wire.encode(value)
        let signature = try FleetSodium.sign(message(kind: kind, body: body), seed: seed)
        return SignedRecord(kind: kind, body: Data(body), signature: Data(signature))
    }

    /// The body decoded as `T`, when the record is of `kind` and signed by `publicKey`;
    /// else `FleetError.verification` naming `what`.
    public func verified<T: Decodable>(
        as type: T.Type, kind expected: RecordKind, publicKey: [UInt8], what: String
    ) throws(FleetError) -> T {
        guard kind == expected else { throw .verification("\(what): a \(kind.rawValue) record, not \(expected)") }
        guard
            FleetSodium.verify(
                Array(signature), message: Self.message(kind: kind, body: Array(body)),
                publicKey: publicKey)
        else { throw .verification("\(what): bad signature") }
        do { return try JSONDecoder().decode(T.self, from: body) } catch {
            throw .verification("\(what): signed body does not decode")
        }
    }

    /// The envelope as stored in etcd.
    public func encoded() throws -> [UInt8] { try Wire.encode(self) }

    /// Decodes an envelope read from etcd.
    public static func decode(_ bytes: [UInt8], what: String) throws(FleetError) -> SignedRecord {
        do { return try JSONDecoder().decode(SignedRecord.self, from: Data(bytes)) } catch {
            throw .verification("\(what): not a signed record")
        }
    }
}

/// JSON with sorted keys, so a body re-encodes to the same bytes.
enum Wire {
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(value))
    }
}

/// A host's public keys (join request and approved record).
public struct HostRecord: Codable, Sendable, Equatable {
    /// The host's name in the fleet (`[a-z0-9.-]`, also its etcd key).
    public var host: String
    /// Ed25519: signs the host's acks.
    public var signPublicKey: Data
    /// X25519: group keys are sealed to it.
    public var boxPublicKey: Data
    /// The groups the admin put it in (empty in a join request).
    public var groups: [String]
}

/// A group key sealed to one member host.
public struct GroupKeyRecord: Codable, Sendable, Equatable {
    public var group: String
    public var epoch: UInt64
    public var host: String
    /// `crypto_box_seal(groupKey, host's box public key)`.
    public var sealedKey: Data
}

/// One version of one fleet item.
public struct ItemRecord: Codable, Sendable, Equatable {
    /// Stable id of (service, account): 32 hex digits of BLAKE2b.
    public var id: String
    public var version: UInt64
    public var service: String
    public var account: String
    /// The group it is sealed to, and that group's key epoch.
    public var group: String
    public var epoch: UInt64
    /// Grants, by name: each host resolves them in its own user and group databases.
    public var users: [String]
    public var groups: [String]
    /// `UNIT:ID` (ID is the LoadCredential= id).
    public var units: [String]
    /// The data key, wrapped under the group key (context binds id, version, group, epoch).
    public var wrappedKey: Data
    /// The secret under the data key (XChaCha20-Poly1305, associated data binds id and version).
    public var ciphertext: Data
}

/// One line of a manifest.
public struct ManifestEntry: Codable, Sendable, Equatable, Hashable {
    public var id: String
    public var version: UInt64
    public init(id: String, version: UInt64) {
        self.id = id
        self.version = version
    }
}

/// What one host must serve: exactly these item versions, until `notAfter`.
public struct Manifest: Codable, Sendable, Equatable {
    public var host: String
    /// The fleet's write counter when it was signed: a host accepts only a higher one.
    public var seq: UInt64
    /// Unix seconds after which the host stops serving fleet items unless a newer manifest came.
    public var notAfter: Int64
    public var entries: [ManifestEntry]
}

/// What a host applied, for `arca fleet status`.
public struct Ack: Codable, Sendable, Equatable {
    public var host: String
    public var seq: UInt64
    /// The etcd revision the host had read.
    public var revision: Int64
    /// Unix seconds.
    public var at: Int64
    public var errors: [String]
}

/// The fleet head: write counter, manifest lifetime, current group epochs and item versions.
/// Versions live here, signed, rather than being read off the keys under `items/`: someone
/// who deletes or replaces an item key must not make the admin issue a version number twice.
public struct Head: Codable, Sendable, Equatable {
    public var seq: UInt64
    /// Seconds a manifest stays valid.
    public var manifestLifetime: Int64
    public var epochs: [String: UInt64]
    /// The current version of each live item.
    public var items: [String: UInt64] = [:]
    /// The last version of each revoked item (a new put continues from there).
    public var retired: [String: UInt64] = [:]
}

/// Names used as parts of etcd keys.
public enum FleetName {
    /// Whether `name` may be a host or group name: 1-63 of `[a-z0-9.-]`, starting with a letter or digit.
    public static func isValid(_ name: String) -> Bool {
        guard (1...63).contains(name.utf8.count), let first = name.utf8.first, first != UInt8(ascii: "."),
            first != UInt8(ascii: "-")
        else { return false }
        return name.utf8.allSatisfy { c in
            (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")
        }
    }

    /// The item id of (service, account): 32 hex digits of BLAKE2b-128.
    public static func itemID(service: String, account: String) throws -> String {
        let digest = try KeyedHash.blake2b(Array("\(service)\0\(account)".utf8), outputLength: 16)
        return digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
