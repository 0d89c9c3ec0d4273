/// The objects arca-secretd serves and their paths. Login items are named by
/// their vault reference (32 hex digits), so their paths survive restarts.
enum SecretObject: Equatable {
    case service
    case collection(CollectionID)
    case item(CollectionID, String)
    case session(String)
    case prompt(String)

    static let base = "/org/freedesktop/secrets"

    /// The object a path names, or nil. `aliases/default` and `aliases/login` answer
    /// as the login collection (libsecret stores through `aliases/default`).
    init?(path: String) {
        if path == Self.base {
            self = .service
            return
        }
        guard path.hasPrefix(Self.base + "/") else { return nil }
        let parts = path.dropFirst(Self.base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        switch (parts.first, parts.count) {
        case ("collection", 2), ("aliases", 2):
            guard let c = CollectionID(parts[0] == "aliases" ? "alias" : "name", parts[1]) else { return nil }
            self = .collection(c)
        case ("collection", 3), ("aliases", 3):
            guard let c = CollectionID(parts[0] == "aliases" ? "alias" : "name", parts[1]), !parts[2].isEmpty else {
                return nil
            }
            self = .item(c, parts[2])
        case ("session", 2) where !parts[1].isEmpty: self = .session(parts[1])
        case ("prompt", 2) where !parts[1].isEmpty: self = .prompt(parts[1])
        default: return nil
        }
    }

    /// The canonical path.
    var path: String {
        switch self {
        case .service: Self.base
        case .collection(let c): c.path
        case .item(let c, let id): c.path + "/" + id
        case .session(let id): Self.base + "/session/" + id
        case .prompt(let id): Self.base + "/prompt/" + id
        }
    }
}

/// The two collections: the user's vault, and an in-memory one.
enum CollectionID: String, Equatable {
    case login
    case session

    init?(_ kind: String, _ name: String) {
        switch (kind, name) {
        case ("name", "login"), ("alias", "default"), ("alias", "login"): self = .login
        case ("name", "session"), ("alias", "session"): self = .session
        default: return nil
        }
    }

    var path: String { SecretObject.base + "/collection/" + rawValue }
}

/// Hex of a reference, and back: the last element of a login item's path.
enum ReferenceText {
    static func encode(_ bytes: [UInt8]) -> String {
        // Built as UTF-8 in one buffer: paths of whole collections are made from this.
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (i, byte) in bytes.enumerated() {
                out[2 * i] = digits[Int(byte >> 4)]
                out[2 * i + 1] = digits[Int(byte & 15)]
            }
            return bytes.count * 2
        }
    }

    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count == 32 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: 32, by: 2) {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: c - 48
        case 97...102: c - 87
        default: nil
        }
    }
}
