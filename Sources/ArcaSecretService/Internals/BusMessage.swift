import ArcaSystem
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// One sd-bus message: read front to back (a call), or appended to (a reply or signal).
final class BusMessage {
    let message: OpaquePointer
    private let owned: Bool

    init(borrowing message: OpaquePointer) {
        self.message = message
        owned = false
    }

    init(adopting message: OpaquePointer) {
        self.message = message
        owned = true
    }

    deinit { if owned { sd_bus_message_unref(message) } }

    /// The same message, kept alive past the handler that borrowed it (to answer a call
    /// later). The corresponding C function is `sd_bus_message_ref`.
    func retained() -> BusMessage { BusMessage(adopting: sd_bus_message_ref(message)) }

    var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }
    var path: String? { sd_bus_message_get_path(message).map { String(cString: $0) } }
    var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
    var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }
    /// The signature of the body (`sa{ss}`…).
    var signature: String { sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "" }
    /// Whether this is an error reply (a failed call, or its timeout).
    var isError: Bool { sd_bus_message_is_method_error(message, nil) > 0 }
    /// Whether this is a method call (not a signal or reply).
    var isMethodCall: Bool {
        var type: UInt8 = 0
        return sd_bus_message_get_type(message, &type) >= 0 && type == UInt8(SD_BUS_MESSAGE_METHOD_CALL)
    }

    // MARK: Reading

    private static func code(_ c: Character) -> CChar { CChar(bitPattern: c.asciiValue ?? 0) }

    /// Reads one basic value of `type` into `value`; the end of the container (sd-bus
    /// returns 0) is `EBADMSG`. The corresponding C function is `sd_bus_message_read_basic`.
    private func read(_ type: Character, into value: UnsafeMutableRawPointer) throws(BusError) {
        let found = try busCall("read \(type)") { sd_bus_message_read_basic(message, Self.code(type), value) }
        guard found > 0 else { throw BusError(call: "read \(type)", errno: .badMessage, name: nil) }
    }

    /// Reads an `s`, `o` or `g`.
    func readString(_ type: Character = "s") throws(BusError) -> String {
        var value: UnsafePointer<CChar>?
        try read(type, into: &value)
        guard let value else { throw BusError(call: "read \(type)", errno: .badMessage, name: nil) }
        return String(cString: value)
    }

    func readBool() throws(BusError) -> Bool {
        var value: Int32 = 0
        try read("b", into: &value)
        return value != 0
    }

    func readUInt32() throws(BusError) -> UInt32 {
        var value: UInt32 = 0
        try read("u", into: &value)
        return value
    }

    func readUInt64() throws(BusError) -> UInt64 {
        var value: UInt64 = 0
        try read("t", into: &value)
        return value
    }

    /// Reads an `ay`. The corresponding C function is `sd_bus_message_read_array`.
    func readBytes() throws(BusError) -> [UInt8] {
        var pointer: UnsafeRawPointer?
        var size = 0
        _ = try busCall("read ay") { sd_bus_message_read_array(message, Self.code("y"), &pointer, &size) }
        guard let pointer, size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: size))
    }

    /// Enters a container; false at the end of the enclosing array.
    func enter(_ type: Character, _ contents: String) throws(BusError) -> Bool {
        try busCall("enter \(type)\(contents)") { sd_bus_message_enter_container(message, Self.code(type), contents) }
            > 0
    }

    func exit() throws(BusError) {
        _ = try busCall("exit container") { sd_bus_message_exit_container(message) }
    }

    /// The type and contents of the next value (inside a variant: its signature).
    func peek() throws(BusError) -> (type: Character, contents: String)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard try busCall("peek", { sd_bus_message_peek_type(message, &type, &contents) }) > 0 else { return nil }
        return (Character(UnicodeScalar(UInt8(bitPattern: type))), contents.map { String(cString: $0) } ?? "")
    }

    func skip(_ types: String) throws(BusError) {
        _ = try busCall("skip \(types)") { sd_bus_message_skip(message, types) }
    }

    /// Reads an `a{ss}`.
    func readStringDictionary() throws(BusError) -> [String: String] {
        guard try enter("a", "{ss}") else { return [:] }
        var d: [String: String] = [:]
        while try enter("e", "ss") {
            let k = try readString()
            d[k] = try readString()
            try exit()
        }
        try exit()
        return d
    }

    /// Reads an `ao`.
    func readPaths() throws(BusError) -> [String] {
        guard try enter("a", "o") else { return [] }
        var paths: [String] = []
        while let next = try peek(), next.type == "o" { paths.append(try readString("o")) }
        try exit()
        return paths
    }

    /// Reads a `v` of the shapes the Secret Service sends.
    func readVariant() throws(BusError) -> ReadValue {
        guard let (_, contents) = try peek() else { throw BusError(call: "read v", errno: .badMessage, name: nil) }
        guard try enter("v", contents) else { throw BusError(call: "enter v", errno: .badMessage, name: nil) }
        defer { try? exit() }
        switch contents {
        case "s": return .string(try readString())
        case "o": return .objectPath(try readString("o"))
        case "b": return .bool(try readBool())
        case "t": return .uint64(try readUInt64())
        case "ay": return .bytes(try readBytes())
        case "a{ss}": return .stringDictionary(try readStringDictionary())
        default:
            try skip(contents)
            return .other(contents)
        }
    }

    /// Reads an `a{sv}`.
    func readProperties() throws(BusError) -> [String: ReadValue] {
        guard try enter("a", "{sv}") else { return [:] }
        var d: [String: ReadValue] = [:]
        while try enter("e", "sv") {
            let k = try readString()
            d[k] = try readVariant()
            try exit()
        }
        try exit()
        return d
    }

    // MARK: Appending

    /// Appends a value; false if sd-bus refused it.
    func append(_ value: BusValue) -> Bool {
        switch value {
        case .string(let s): return s.withCString { sd_bus_message_append_basic(message, Self.code("s"), $0) } >= 0
        case .objectPath(let s): return s.withCString { sd_bus_message_append_basic(message, Self.code("o"), $0) } >= 0
        case .bool(let b):
            var v: Int32 = b ? 1 : 0
            return sd_bus_message_append_basic(message, Self.code("b"), &v) >= 0
        case .uint64(let n):
            var v = n
            return sd_bus_message_append_basic(message, Self.code("t"), &v) >= 0
        case .bytes(let b):
            let r = b.withUnsafeBytes { sd_bus_message_append_array(message, Self.code("y"), $0.baseAddress, $0.count) }
            return r >= 0
        case .variant(let inner): return container("v", inner.signature, [inner])
        case .array(let element, let items): return container("a", element, items)
        case .entry(let k, let v): return container("e", k.signature + v.signature, [k, v])
        case .structure(let fields): return container("r", fields.map(\.signature).joined(), fields)
        }
    }

    private func container(_ type: Character, _ contents: String, _ values: [BusValue]) -> Bool {
        guard sd_bus_message_open_container(message, Self.code(type), contents) >= 0 else { return false }
        for v in values { guard append(v) else { return false } }
        return sd_bus_message_close_container(message) >= 0
    }
}
