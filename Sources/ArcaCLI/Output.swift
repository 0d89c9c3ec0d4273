import ArcaCrypto

/// What a run of `arca` writes, kept in memory until the end so that `main`
/// writes each stream with one system call (and tests can read it back).
/// Buffers that held a secret are zeroed by ``wipe()``.
public struct Output: Sendable {
    /// Bytes for stdout.
    public var standardOutput: [UInt8] = []
    /// Bytes for stderr.
    public var standardError: [UInt8] = []
    /// Whether stdout is a terminal (then `get` adds a newline).
    public var standardOutputIsTerminal: Bool

    /// An empty output; `terminal` tells whether stdout is a terminal.
    public init(standardOutputIsTerminal terminal: Bool = false) {
        self.standardOutputIsTerminal = terminal
    }

    /// Appends a line to stdout.
    public mutating func line(_ text: String) {
        standardOutput.append(contentsOf: text.utf8)
        standardOutput.append(0x0a)
    }

    /// Appends a line to stderr.
    public mutating func errorLine(_ text: String) {
        standardError.append(contentsOf: text.utf8)
        standardError.append(0x0a)
    }

    /// Appends a secret's bytes to stdout.
    public mutating func secret(_ secret: SecretBytes) {
        secret.withUnsafeBytes { standardOutput.append(contentsOf: $0) }
    }

    /// Zeroes both buffers (they may hold a secret).
    public mutating func wipe() {
        for index in standardOutput.indices { standardOutput[index] = 0 }
        for index in standardError.indices { standardError[index] = 0 }
    }
}

/// A compact JSON writer over bytes, so that a secret never becomes a `String`.
struct JSONWriter {
    var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    mutating func beginObject() {
        separator()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    mutating func beginArray() {
        separator()
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    mutating func key(_ name: String) {
        separator()
        quoted(name.utf8)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows must not add another comma.
        needsComma[needsComma.count - 1] = false
    }

    private mutating func valueWritten() { needsComma[needsComma.count - 1] = true }

    mutating func string<C: Collection>(utf8 value: C) where C.Element == UInt8 {
        separator()
        quoted(value)
        valueWritten()
    }

    mutating func string(_ value: String) { string(utf8: value.utf8) }

    mutating func number<N: BinaryInteger>(_ value: N) {
        separator()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func bool(_ value: Bool) {
        separator()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    private mutating func quoted<C: Collection>(_ value: C) where C.Element == UInt8 {
        bytes.append(UInt8(ascii: "\""))
        for byte in value {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: bytes.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: bytes.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0..<0x20, 0x7f:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0f)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Moves the document, and a newline, into `output`, and zeroes the writer's copy.
    mutating func flush(into output: inout Output) {
        output.standardOutput.append(contentsOf: bytes)
        output.standardOutput.append(0x0a)
        for index in bytes.indices { bytes[index] = 0 }
        bytes = []
    }
}

/// Small formatters that would otherwise pull in Foundation.
enum Format {
    /// `2026-11-29T12:18:39Z` from microseconds since the epoch (UTC, whole seconds).
    static func isoDate(microseconds: Int64) -> String {
        var seconds = microseconds / 1_000_000
        if microseconds < 0, microseconds % 1_000_000 != 0 { seconds -= 1 }
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            rest += 86_400
            days -= 1
        }
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(rest / 3600, 2)):\(pad(rest % 3600 / 60, 2)):"
            + "\(pad(rest % 60, 2))Z"
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Standard base64 with padding.
    static func base64<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        var iterator = data.makeIterator()
        while let a = iterator.next() {
            let b = iterator.next()
            let c = b == nil ? nil : iterator.next()
            let n = UInt32(a) << 16 | UInt32(b ?? 0) << 8 | UInt32(c ?? 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(b == nil ? UInt8(ascii: "=") : alphabet[Int(n >> 6 & 63)])
            out.append(c == nil ? UInt8(ascii: "=") : alphabet[Int(n & 63)])
        }
        return out
    }
}
