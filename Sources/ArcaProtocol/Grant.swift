/// Who may read an item of the system vault (ARCHITECTURE §8).
///
/// Names are resolved to ids by the client (`arca` looks users and groups up
/// in the local databases), so that arcad decides on numbers only.
public enum Principal: Sendable, Hashable {
    /// A uid: its processes read over the socket, and the item is placed in that
    /// uid's persistent keyring.
    case user(UInt32)
    /// A gid: each member (primary or supplementary) is treated as a `user`.
    case group(UInt32)
    /// A systemd unit, served by the credentials socket only, under `credential`
    /// (the `ID` of its `LoadCredential=ID:/run/arca/credentials.sock`).
    case unit(name: String, credential: String)
}

/// One system item and the principals allowed to read it, as `arca grants` lists it.
public struct GrantEntry: Sendable, Hashable {
    /// The item's `kSecAttrService`.
    public var service: String?
    /// The item's `kSecAttrAccount`.
    public var account: String?
    /// The item's `kSecAttrLabel`.
    public var label: String?
    /// Who may read it, in the order granted.
    public var principals: [Principal]

    /// An entry from its parts.
    public init(service: String?, account: String?, label: String?, principals: [Principal]) {
        self.service = service
        self.account = account
        self.label = label
        self.principals = principals
    }
}

extension WireWriter {
    /// A principal: kind byte, then its id or names.
    mutating func principal(_ p: Principal) throws(ProtocolError) {
        switch p {
        case .user(let uid):
            u8(1)
            u32(uid)
        case .group(let gid):
            u8(2)
            u32(gid)
        case .unit(let name, let credential):
            u8(3)
            try string(name, field: "unit", limit: ProtocolLimits.maximumNameLength)
            try string(credential, field: "credential", limit: ProtocolLimits.maximumNameLength)
        }
    }

    mutating func principals(_ list: [Principal]) throws(ProtocolError) {
        try self.list(list, field: "principals", limit: ProtocolLimits.maximumListCount) {
            w, p throws(ProtocolError) in try w.principal(p)
        }
    }
}

extension WireReader {
    mutating func principal() throws(ProtocolError) -> Principal {
        let kind = try u8()
        switch kind {
        case 1: return .user(try u32())
        case 2: return .group(try u32())
        case 3:
            return .unit(
                name: try string(field: "unit", limit: ProtocolLimits.maximumNameLength),
                credential: try string(field: "credential", limit: ProtocolLimits.maximumNameLength))
        default: throw .unknownTag(field: "principal", value: UInt32(kind))
        }
    }

    mutating func principals() throws(ProtocolError) -> [Principal] {
        try list(field: "principals", limit: ProtocolLimits.maximumListCount) { r throws(ProtocolError) in
            try r.principal()
        }
    }
}
