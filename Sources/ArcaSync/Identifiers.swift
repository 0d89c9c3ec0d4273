import ArcaCrypto

/// A device of a sync circle: its Ed25519 public key (32 bytes). Ordered bytewise, which
/// breaks ties between records of equal clock in the last-writer-wins rule.
public struct DeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32-byte Ed25519 public key.
    public let bytes: [UInt8]

    /// Wraps a 32-byte public key.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw SyncError.malformed("device id must be 32 bytes") }
        self.bytes = bytes
    }

    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// Lowercase hex of the whole key.
    public var description: String { Hex.encode(bytes) }
    /// The first 8 bytes in hex, for messages.
    public var short: String { Hex.encode(Array(bytes.prefix(8))) }
}

/// An item's random, never reused 16-byte reference in the circle. A re-created item gets a
/// fresh one, so an old tombstone cannot delete it.
public struct ItemRef: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 16 bytes.
    public let bytes: [UInt8]

    /// Wraps 16 bytes.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.count == 16 else { throw SyncError.malformed("item ref must be 16 bytes") }
        self.bytes = bytes
    }

    /// A fresh random reference.
    public static func random() -> ItemRef {
        ItemRef(unchecked: SecureRandom.bytes(count: 16))
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    public static func < (a: ItemRef, b: ItemRef) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
    public var description: String { Hex.encode(bytes) }
}

/// A BLAKE2b-256 digest: a record's hash, a log's chain hash.
public struct Digest: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 32 bytes.
    public let bytes: [UInt8]
    /// 32 zero bytes: the previous hash of an author's first record.
    public static let zero = Digest(unchecked: [UInt8](repeating: 0, count: 32))

    /// Wraps 32 bytes.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.count == 32 else { throw SyncError.malformed("digest must be 32 bytes") }
        self.bytes = bytes
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// BLAKE2b-256 of `message`.
    public static func of(_ message: [UInt8]) -> Digest {
        // Unkeyed BLAKE2b with a valid output length cannot fail once libsodium is ready;
        // a failure (no libsodium) gives a digest no real record has.
        Digest(unchecked: (try? KeyedHash.blake2b(message)) ?? [UInt8](repeating: 0xff, count: 32))
    }

    public static func < (a: Digest, b: Digest) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
    public var description: String { Hex.encode(bytes) }
}

/// Lowercase hex.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes of an even-length hex string, or nil.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = value(chars[i]), let lo = value(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
