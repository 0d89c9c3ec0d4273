/// The description scheme of item keys, documented in arca-keyring(7):
///
///     arca:genp:<service>:<account>[:g=<accessGroup>][:sync]
///     arca:inet:<server>:<account>[:proto=<protocol>][:port=<port>][:path=<path>]
///              [:domain=<securityDomain>][:auth=<authenticationType>][:g=<accessGroup>][:sync]
///
/// Optional fields appear only when not at their default (empty, 0, false), in
/// this order, so every primary key has exactly one description. In each field
/// `%`, `:`, the control bytes and DEL are written `%XX` (upper-case hex); every
/// other byte, UTF-8 included, stands for itself.
extension KeyringItemKey {
    /// The prefix shared by every Arca item key.
    public static let descriptionPrefix = "arca:"

    /// The longest description the kernel accepts, in bytes.
    public static let maximumDescriptionLength = 4_095

    /// The canonical description of this item's kernel key.
    public var keyDescription: String {
        // Appended field by field rather than `[String].joined(separator:)`, whose first
        // use costs the static runtime a scan of every protocol conformance in `arca`.
        var text = Self.descriptionPrefix
        func field(_ value: String) { text += ":" + value }
        switch self {
        case .genericPassword(let key):
            text += "genp:" + Self.escape(key.service)
            field(Self.escape(key.account))
            if !key.accessGroup.isEmpty { field("g=" + Self.escape(key.accessGroup)) }
            if key.synchronizable { field("sync") }
        case .internetPassword(let key):
            text += "inet:" + Self.escape(key.server)
            field(Self.escape(key.account))
            if !key.protocol.isEmpty { field("proto=" + Self.escape(key.protocol)) }
            if key.port != 0 { field("port=" + String(key.port)) }
            if !key.path.isEmpty { field("path=" + Self.escape(key.path)) }
            if !key.securityDomain.isEmpty { field("domain=" + Self.escape(key.securityDomain)) }
            if !key.authenticationType.isEmpty { field("auth=" + Self.escape(key.authenticationType)) }
            if !key.accessGroup.isEmpty { field("g=" + Self.escape(key.accessGroup)) }
            if key.synchronizable { field("sync") }
        }
        return text
    }

    /// Parses a description back into the primary key. Returns nil unless the text
    /// is exactly the canonical description of some key (so parse and print are inverses).
    public init?(keyDescription text: String) {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 4, fields[0] == "arca",
            let first = Self.unescape(fields[2]), let account = Self.unescape(fields[3])
        else { return nil }
        var options: [(name: String, value: String?)] = []
        for field in fields.dropFirst(4) {
            if let equals = field.firstIndex(of: "=") {
                guard let value = Self.unescape(String(field[field.index(after: equals)...])) else { return nil }
                options.append((String(field[..<equals]), value))
            } else {
                options.append((field, nil))
            }
        }
        func take(_ name: String) -> String? {
            guard let first = options.first, first.name == name, let value = first.value else { return nil }
            options.removeFirst()
            return value
        }
        func takeFlag(_ name: String) -> Bool {
            guard let first = options.first, first.name == name, first.value == nil else { return false }
            options.removeFirst()
            return true
        }
        switch fields[1] {
        case "genp":
            let group = take("g") ?? ""
            let sync = takeFlag("sync")
            self = .genericPassword(
                GenericPasswordKey(service: first, account: account, accessGroup: group, synchronizable: sync))
        case "inet":
            let proto = take("proto") ?? ""
            var port = 0
            if let text = take("port") {
                guard let value = Int(text), value > 0, value <= 65_535, String(value) == text else { return nil }
                port = value
            }
            let path = take("path") ?? ""
            let domain = take("domain") ?? ""
            let auth = take("auth") ?? ""
            let group = take("g") ?? ""
            let sync = takeFlag("sync")
            self = .internetPassword(
                InternetPasswordKey(
                    server: first, account: account, protocol: proto, port: port, path: path,
                    securityDomain: domain, authenticationType: auth, accessGroup: group, synchronizable: sync))
        default:
            return nil
        }
        // Leftover or out-of-order options, or a present-but-default value
        // ("g=", "proto="), make the text non-canonical.
        guard options.isEmpty, keyDescription == text else { return nil }
    }

    static func escape(_ text: String) -> String {
        // Most names need no escape: no byte array then (a fresh process's first one costs
        // more than the rest of `arca get`'s lookup).
        guard text.utf8.contains(where: needsEscape) else { return text }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if needsEscape(byte) {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0f))
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unescape(_ text: String) -> String? {
        var out = [UInt8]()
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// `%`, `:`, the control bytes and DEL.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "%") || byte == UInt8(ascii: ":") || byte < 0x20 || byte == 0x7f
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
