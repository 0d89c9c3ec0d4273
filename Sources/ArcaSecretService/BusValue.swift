/// A D-Bus value to send, with its signature: the shapes the Secret Service uses.
indirect enum BusValue: Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint64(UInt64)
    /// `ay`. May hold a secret: the message is freed by sd-bus, so send secrets
    /// only to their owner, as the spec requires.
    case bytes([UInt8])
    case variant(BusValue)
    /// An array of elements of `elementSignature`.
    case array(elementSignature: String, [BusValue])
    /// A dictionary entry `{kv}` (only inside an array).
    case entry(BusValue, BusValue)
    case structure([BusValue])

    /// The D-Bus signature of this value.
    var signature: String {
        switch self {
        case .string: "s"
        case .objectPath: "o"
        case .bool: "b"
        case .uint64: "t"
        case .bytes: "ay"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .entry(let k, let v): "{" + k.signature + v.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// `ao`.
    static func paths(_ paths: [String]) -> BusValue { .array(elementSignature: "o", paths.map { .objectPath($0) }) }

    /// `a{ss}`, sorted by key.
    static func stringDictionary(_ d: [String: String]) -> BusValue {
        .array(elementSignature: "{ss}", d.keys.sorted().map { .entry(.string($0), .string(d[$0] ?? "")) })
    }

    /// `a{sv}`, sorted by key.
    static func properties(_ d: [String: BusValue]) -> BusValue {
        .array(
            elementSignature: "{sv}", d.keys.sorted().compactMap { k in d[k].map { .entry(.string(k), .variant($0)) } })
    }
}

/// A value read from a message, for arguments whose type a client may vary
/// (variants in property dictionaries).
indirect enum ReadValue: Equatable {
    case string(String)
    case objectPath(String)
    case bool(Bool)
    case uint64(UInt64)
    case bytes([UInt8])
    case stringDictionary([String: String])
    case other(String)
}
