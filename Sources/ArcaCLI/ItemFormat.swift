import ArcaCrypto
import ArcaProtocol

/// How items are printed: `find`'s text blocks, the `--json` objects (schema in
/// arca(1)), and macOS `security`'s attribute listing.
enum ItemFormat {
    /// The CLI name of an accessibility class (`when-unlocked`).
    static func name(_ accessibility: Accessibility) -> String {
        Validation.accessibilityNames.first { $0.1 == accessibility }?.0 ?? "unknown"
    }

    static func className(_ itemClass: ItemClass) -> String {
        itemClass == .genericPassword ? "genp" : "inet"
    }

    /// The text form of a value; nil for bytes (shown base64 in JSON only).
    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): return s
        case .bytes(let b): return String(decoding: Format.base64(b), as: UTF8.self)
        case .uint32(let n): return String(n)
        case .bool(let b): return b ? "true" : "false"
        case .date(let micros): return Format.isoDate(microseconds: micros)
        case .itemClass(let c): return className(c)
        case .accessibility(let a): return name(a)
        }
    }

    /// The access group of `arca-secretd`'s items (the vault's reserved group).
    static let secretServiceGroup = "org.freedesktop.secrets"

    /// `find`'s block: `class: genp`, then `name: value` per attribute in tag order;
    /// for a Secret Service item then `contentType: …` and one `attribute: name=value`
    /// line per attribute, sorted by name.
    static func text(
        _ itemClass: ItemClass, _ item: ResultItem, secretService: AttributeItemInfo? = nil, into output: inout Output
    ) {
        output.line("class: " + className(itemClass))
        for tag in item.attributes.keys.sorted() where tag != .itemClass {
            guard let value = item.attributes[tag] else { continue }
            output.line(tag.fieldName + ": " + text(value))
        }
        if let secretService {
            output.line("contentType: " + secretService.contentType)
            for name in secretService.attributes.keys.sorted() {
                output.line("attribute: \(name)=\(secretService.attributes[name] ?? "")")
            }
        }
        if let data = item.data {
            output.standardOutput.append(contentsOf: Array("secret: ".utf8))
            output.standardOutput.append(contentsOf: data)
            output.standardOutput.append(0x0a)
        }
    }

    /// One JSON object per item: `class`, then each attribute under its field
    /// name (strings, numbers, booleans; dates as ISO 8601; `generic` in base64),
    /// then `secret` or `secretBase64` when asked for.
    /// A Secret Service item also gets `contentType` and `secretServiceAttributes` (an object).
    static func json(
        _ itemClass: ItemClass, _ item: ResultItem, secretService: AttributeItemInfo? = nil,
        into writer: inout JSONWriter
    ) {
        writer.beginObject()
        writer.key("class")
        writer.string(className(itemClass))
        for tag in item.attributes.keys.sorted() where tag != .itemClass {
            guard let value = item.attributes[tag] else { continue }
            writer.key(tag.fieldName)
            switch value {
            case .uint32(let n): writer.number(n)
            case .bool(let b): writer.bool(b)
            default: writer.string(text(value))
            }
        }
        if let secretService {
            writer.key("contentType")
            writer.string(secretService.contentType)
            writer.key("secretServiceAttributes")
            writer.beginObject()
            for name in secretService.attributes.keys.sorted() {
                writer.key(name)
                writer.string(secretService.attributes[name] ?? "")
            }
            writer.endObject()
        }
        if var data = item.data {
            if let secret = try? SecretBytes(consuming: &data) {
                Context.writeSecret(secret, into: &writer)
            }
        }
        writer.endObject()
    }

    /// macOS `security find-*-password`'s listing: four-letter attribute names, sorted.
    static func security(_ itemClass: ItemClass, _ item: ResultItem, into output: inout Output) {
        output.line("keychain: \"arca\"")
        output.line("version: 512")
        output.line("class: \"\(className(itemClass))\"")
        output.line("attributes:")
        let names: [AttributeTag: String] = [
            .account: "acct", .service: "svce", .label: "labl", .description: "desc", .comment: "icmt",
            .server: "srvr", .protocol: "ptcl", .port: "port", .path: "path", .securityDomain: "sdmn",
            .authenticationType: "atyp", .accessGroup: "agrp", .creationDate: "cdat", .modificationDate: "mdat",
        ]
        var lines: [String] = []
        for (tag, code) in names {
            guard let value = item.attributes[tag] else { continue }
            switch value {
            case .uint32(let n): lines.append("    \"\(code)\"<uint32>=\(n)")
            case .date: lines.append("    \"\(code)\"<timedate>=\"\(text(value))\"")
            default: lines.append("    \"\(code)\"<blob>=\"\(text(value))\"")
            }
        }
        for line in lines.sorted() { output.line(line) }
    }
}
