import ArcaProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where grants live: encrypted in the item itself, in its `kSecAttrGeneric`
/// attribute (system items are generic passwords only, and arcad reserves that
/// attribute for this, refusing it from clients and stripping it from replies).
/// Why there rather than in a table of their own:
/// - the vault encrypts and authenticates every attribute with the item's key and
///   binds it to the item (ItemCodec's associated data), so someone who can write
///   `system.db` but not read `host.key` cannot add a principal to an item;
/// - deleting an item deletes its grants in the same SQLite transaction, so a
///   grant can never outlive or point at the wrong item, and no schema change of
///   ArcaVault is needed.
///
/// Layout: "arca-grants" 0x01, then per principal: kind u8 (1 uid, 2 gid, 3 unit),
/// then a big-endian u32 id, or for a unit two (u16 length, UTF-8) names.
enum GrantCodec {
    private static let magic = Array("arca-grants".utf8) + [1]

    static func encode(_ principals: [Principal]) -> [UInt8] {
        var out = magic
        func u32(_ v: UInt32) { out += [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
        func name(_ s: String) {
            let bytes = Array(s.utf8.prefix(Int(UInt16.max)))
            out += [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xff)] + bytes
        }
        for p in principals {
            switch p {
            case .user(let uid):
                out.append(1)
                u32(uid)
            case .group(let gid):
                out.append(2)
                u32(gid)
            case .unit(let unit, let credential):
                out.append(3)
                name(unit)
                name(credential)
            }
        }
        return out
    }

    /// The principals recorded in `bytes`; none for anything that is not a grant record.
    static func decode(_ bytes: [UInt8]?) -> [Principal] {
        guard let bytes, bytes.starts(with: magic) else { return [] }
        var i = magic.count
        var out: [Principal] = []
        func take(_ n: Int) -> ArraySlice<UInt8>? {
            guard n >= 0, i + n <= bytes.count else { return nil }
            defer { i += n }
            return bytes[i..<i + n]
        }
        func u32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }
        func name() -> String? {
            guard let length = take(2).map({ Int($0.first ?? 0) << 8 | Int($0.last ?? 0) }), let b = take(length) else {
                return nil
            }
            return String(validating: b, as: UTF8.self)
        }
        while let kind = take(1)?.first {
            switch kind {
            case 1:
                guard let v = u32() else { return out }
                out.append(.user(v))
            case 2:
                guard let v = u32() else { return out }
                out.append(.group(v))
            case 3:
                guard let unit = name(), let credential = name() else { return out }
                out.append(.unit(name: unit, credential: credential))
            default: return out
            }
        }
        return out
    }
}
