import ArcaSystem
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A failed sd-bus call: the negative errno sd-bus returned, and the D-Bus
/// error name when the peer replied with one.
struct SDBusError: Error, CustomStringConvertible {
    /// The sd-bus function (and what it was for).
    let call: String
    /// The error sd-bus returned (it returns `-errno`), or `EBADMSG` for a reply of
    /// another shape than expected.
    let errno: Errno
    /// The D-Bus error name (`org.freedesktop.DBus.Error.ServiceUnknown`…), if any.
    let name: String?

    /// Whether the error says that nobody owns the destination name.
    var isNoOwner: Bool {
        name == "org.freedesktop.DBus.Error.ServiceUnknown" || name == "org.freedesktop.DBus.Error.NameHasNoOwner"
    }

    var description: String {
        let text = String(cString: strerror(errno.rawValue))
        if let name { return "\(call): \(name) (\(text))" }
        return "\(call): \(text)"
    }
}

/// Runs an sd-bus call (which returns `-errno` on failure) through ArcaSystem's one
/// errno helper, ``valueOrNegatedErrno(retryOnInterrupt:_:)``: its result, or an
/// ``SDBusError`` naming `call`. Never retried on `EINTR`: sd-bus retries inside its
/// own calls, and one that has sent a message must not send it again.
private func sdBus(_ call: @autoclosure () -> String, name: () -> String? = { nil }, _ body: () -> Int32)
    throws(SDBusError) -> Int32
{
    switch valueOrNegatedErrno(retryOnInterrupt: false, body) {
    case .success(let r): return r
    case .failure(let e): throw SDBusError(call: call(), errno: e, name: name())
    }
}

/// Signals delivered to the match callbacks, in arrival order, until the loop drains them.
private final class Inbox {
    var messages: [SDBusMessage] = []
}

/// One connection to the system bus, used from one thread only (sd-bus objects
/// are not thread-safe). Thin wrappers, one per C call.
final class SDBusConnection {
    private let bus: OpaquePointer
    private let inbox = Inbox()
    /// Timeout of method calls: logind answers in microseconds; a hung bus must
    /// not hang the watcher for the default 25 s.
    static let callTimeoutMicroseconds: UInt64 = 2_000_000

    private init(bus: OpaquePointer) { self.bus = bus }

    deinit { sd_bus_flush_close_unref(bus) }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else
    /// `/run/dbus/system_bus_socket`). The corresponding C function is `sd_bus_open_system`.
    static func openSystem() throws(SDBusError) -> SDBusConnection {
        var bus: OpaquePointer?
        _ = try sdBus("sd_bus_open_system") { sd_bus_open_system(&bus) }
        guard let bus else { throw SDBusError(call: "sd_bus_open_system", errno: .noMemory, name: nil) }
        return SDBusConnection(bus: bus)
    }

    /// Subscribes to the signals matching `rule`; matching messages are queued
    /// for `takeSignals()`. The corresponding C function is `sd_bus_add_match`.
    func addMatch(_ rule: String) throws(SDBusError) {
        let userdata = Unmanaged.passUnretained(inbox).toOpaque()
        _ = try sdBus("sd_bus_add_match \(rule)") {
            sd_bus_add_match(
                bus, nil, rule,
                { message, userdata, _ in
                    guard let message, let userdata else { return 0 }
                    let inbox = Unmanaged<Inbox>.fromOpaque(userdata).takeUnretainedValue()
                    inbox.messages.append(SDBusMessage(retaining: message))
                    return 0
                }, userdata)
        }
    }

    /// The signals queued since the last call.
    func takeSignals() -> [SDBusMessage] {
        defer { inbox.messages.removeAll(keepingCapacity: true) }
        return inbox.messages
    }

    /// Calls a method with string arguments and waits for the reply. The
    /// corresponding C functions are `sd_bus_message_new_method_call` and `sd_bus_call`.
    func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, strings: [String] = []
    ) throws(SDBusError) -> SDBusMessage {
        var request: OpaquePointer?
        _ = try sdBus("new call \(member)") {
            sd_bus_message_new_method_call(bus, &request, destination, path, interface, member)
        }
        guard let request else { throw SDBusError(call: "new call \(member)", errno: .noMemory, name: nil) }
        defer { sd_bus_message_unref(request) }
        for argument in strings {
            _ = try sdBus("append to \(member)") {
                argument.withCString { sd_bus_message_append_basic(request, CChar(UInt8(ascii: "s")), $0) }
            }
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        _ = try sdBus("\(interface).\(member)", name: { error.name.map { String(cString: $0) } }) {
            sd_bus_call(bus, request, Self.callTimeoutMicroseconds, &error, &reply)
        }
        guard let reply else { throw SDBusError(call: "\(interface).\(member)", errno: .badMessage, name: nil) }
        return SDBusMessage(adopting: reply)
    }

    /// A boolean property. The corresponding C function is `sd_bus_get_property_trivial`.
    func boolProperty(_ destination: String, _ path: String, _ interface: String, _ member: String)
        throws(SDBusError) -> Bool
    {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var value: Int32 = 0
        _ = try sdBus("get \(member)", name: { error.name.map { String(cString: $0) } }) {
            sd_bus_get_property_trivial(
                bus, destination, path, interface, member, &error, CChar(UInt8(ascii: "b")), &value)
        }
        return value != 0
    }

    /// Processes one pending message (running match callbacks); false when
    /// nothing was pending. The corresponding C function is `sd_bus_process`.
    func process() throws(SDBusError) -> Bool {
        try sdBus("sd_bus_process") { sd_bus_process(bus, nil) } > 0
    }

    /// Waits until a message may be pending or `microseconds` pass
    /// (`UInt64.max`: forever). An interrupted wait returns, as a wake-up would: the
    /// caller processes and waits again. The corresponding C function is `sd_bus_wait`.
    func wait(microseconds: UInt64) throws(SDBusError) {
        switch valueOrNegatedErrno(retryOnInterrupt: false, { sd_bus_wait(bus, microseconds) }) {
        case .success, .failure(.interrupted): return
        case .failure(let e): throw SDBusError(call: "sd_bus_wait", errno: e, name: nil)
        }
    }
}

/// One D-Bus message, read front to back.
final class SDBusMessage {
    private let message: OpaquePointer

    init(retaining message: OpaquePointer) {
        self.message = message
        sd_bus_message_ref(message)
    }

    init(adopting message: OpaquePointer) { self.message = message }

    deinit { sd_bus_message_unref(message) }

    /// The sender's unique name (`:1.42`).
    var sender: String? { sd_bus_message_get_sender(message).map { String(cString: $0) } }
    /// The object path.
    var path: String? { sd_bus_message_get_path(message).map { String(cString: $0) } }
    /// The interface.
    var interface: String? { sd_bus_message_get_interface(message).map { String(cString: $0) } }
    /// The member (signal or method name).
    var member: String? { sd_bus_message_get_member(message).map { String(cString: $0) } }

    /// Reads a string, object path or signature (`s`, `o`, `g`).
    func readString(_ type: Character = "s") throws(SDBusError) -> String {
        var value: UnsafePointer<CChar>?
        try read(type, into: &value)
        guard let value else { throw SDBusError(call: "read \(type)", errno: .badMessage, name: nil) }
        return String(cString: value)
    }

    /// Reads an `h` (a Unix file descriptor) and returns a duplicate the caller
    /// owns (close-on-exec); the message's own copy closes with the message. The
    /// corresponding C functions are `sd_bus_message_read_basic` and `fcntl(F_DUPFD_CLOEXEC)`.
    func readFileDescriptor() throws(SDBusError) -> Int32 {
        var value: Int32 = -1
        try read("h", into: &value)
        do {
            return try FileDescriptor(rawValue: value).duplicate().rawValue
        } catch {
            throw SDBusError(call: "dup h", errno: error, name: nil)
        }
    }

    /// Reads a `u`.
    func readUInt32() throws(SDBusError) -> UInt32 {
        var value: UInt32 = 0
        try read("u", into: &value)
        return value
    }

    /// Reads a `b`.
    func readBool() throws(SDBusError) -> Bool {
        var value: Int32 = 0
        try read("b", into: &value)
        return value != 0
    }

    /// Enters a container (`a`, `r`, `e`, `v`) of `contents`; false at the end of
    /// the enclosing array. The corresponding C function is `sd_bus_message_enter_container`.
    func enter(_ type: Character, _ contents: String) throws(SDBusError) -> Bool {
        try sdBus("enter \(type)\(contents)") { sd_bus_message_enter_container(message, Self.code(type), contents) } > 0
    }

    /// Leaves the current container.
    func exit() throws(SDBusError) {
        _ = try sdBus("exit container") { sd_bus_message_exit_container(message) }
    }

    /// Skips values of the given signature.
    func skip(_ types: String) throws(SDBusError) {
        _ = try sdBus("skip \(types)") { sd_bus_message_skip(message, types) }
    }

    /// Reads one basic value of `type` into `value`; the end of the container (sd-bus
    /// returns 0) is `EBADMSG`. The corresponding C function is `sd_bus_message_read_basic`.
    private func read(_ type: Character, into value: UnsafeMutableRawPointer) throws(SDBusError) {
        let found = try sdBus("read \(type)") { sd_bus_message_read_basic(message, Self.code(type), value) }
        guard found > 0 else { throw SDBusError(call: "read \(type)", errno: .badMessage, name: nil) }
    }

    private static func code(_ type: Character) -> CChar { CChar(bitPattern: type.asciiValue ?? 0) }
}
