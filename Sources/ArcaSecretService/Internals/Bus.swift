import ArcaSystem
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A failed sd-bus call: the function and the errno it returned.
public struct BusError: Error, CustomStringConvertible {
    /// The sd-bus function and what it was for.
    public let call: String
    /// The error sd-bus returned (it returns `-errno`), or the one a malformed reply
    /// or a broken peer is given (`EBADMSG`, `EPROTO`).
    public let errno: Errno
    /// The D-Bus error name of a failed method call, if any.
    public let name: String?

    public var description: String {
        let text = String(cString: strerror(errno.rawValue))
        if let name { return "\(call): \(name) (\(text))" }
        return "\(call): \(text)"
    }
}

/// Runs an sd-bus call (which returns `-errno` on failure) through ArcaSystem's one
/// errno helper, ``valueOrNegatedErrno(retryOnInterrupt:_:)``: its result, or a
/// ``BusError`` naming `call`. Never retried on `EINTR`: sd-bus retries inside its own
/// calls, and one that has sent a message must not send it again.
func busCall(_ call: @autoclosure () -> String, name: () -> String? = { nil }, _ body: () -> Int32)
    throws(BusError) -> Int32
{
    switch valueOrNegatedErrno(retryOnInterrupt: false, body) {
    case .success(let r): return r
    case .failure(let e): throw BusError(call: call(), errno: e, name: name())
    }
}

/// The session-bus connection of arca-secretd, used from its one bus thread.
/// Thin wrappers, one per sd-bus call; only this file and BusMessage touch pointers.
final class BusConnection {
    let bus: OpaquePointer
    private var handlers: [Unmanaged<HandlerBox>] = []

    private final class HandlerBox {
        let body: (BusMessage) -> Void
        init(_ body: @escaping (BusMessage) -> Void) { self.body = body }
    }

    private init(bus: OpaquePointer) { self.bus = bus }

    deinit {
        sd_bus_flush_close_unref(bus)
        for h in handlers { h.release() }
    }

    /// Connects to the session bus (`DBUS_SESSION_BUS_ADDRESS`). The corresponding C function is `sd_bus_open_user`.
    static func openSession() throws(BusError) -> BusConnection {
        var bus: OpaquePointer?
        _ = try busCall("sd_bus_open_user") { sd_bus_open_user(&bus) }
        guard let bus else { throw BusError(call: "sd_bus_open_user", errno: .noMemory, name: nil) }
        return BusConnection(bus: bus)
    }

    /// Our unique name (`:1.7`). The corresponding C function is `sd_bus_get_unique_name`.
    var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Asks for a well-known name; `replace` takes it from an owner that allows it.
    /// Returns false if another connection owns it. The corresponding C function is `sd_bus_request_name`.
    func requestName(_ name: String, replace: Bool) throws(BusError) -> Bool {
        var flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT)
        if replace { flags |= UInt64(SD_BUS_NAME_REPLACE_EXISTING) }
        switch valueOrNegatedErrno(retryOnInterrupt: false, { sd_bus_request_name(bus, name, flags) }) {
        case .success, .failure(.alreadyInProgress): return true
        case .failure(.exists): return false
        case .failure(let e): throw BusError(call: "sd_bus_request_name \(name)", errno: e, name: nil)
        }
    }

    /// Calls `body` with every method call to `prefix` or below (replied to by
    /// `body`). The corresponding C function is `sd_bus_add_fallback`.
    func addFallback(_ prefix: String, _ body: @escaping (BusMessage) -> Void) throws(BusError) {
        let userdata = retain(body)
        _ = try busCall("sd_bus_add_fallback \(prefix)") { sd_bus_add_fallback(bus, nil, prefix, handled, userdata) }
    }

    /// Calls `body` with every message matching `rule`. The corresponding C function is `sd_bus_add_match`.
    func addMatch(_ rule: String, _ body: @escaping (BusMessage) -> Void) throws(BusError) {
        let userdata = retain(body)
        _ = try busCall("sd_bus_add_match \(rule)") { sd_bus_add_match(bus, nil, rule, observed, userdata) }
    }

    /// Keeps a handler alive as long as the connection (sd-bus holds only its pointer).
    private func retain(_ body: @escaping (BusMessage) -> Void) -> UnsafeMutableRawPointer {
        let box = Unmanaged.passRetained(HandlerBox(body))
        handlers.append(box)
        return box.toOpaque()
    }

    fileprivate static func dispatch(_ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
        guard let message, let userdata else { return }
        Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue().body(BusMessage(borrowing: message))
    }

    /// Calls a bus method with string arguments and waits (2 s at most).
    func call(_ destination: String, _ path: String, _ interface: String, _ member: String, _ strings: [String])
        throws(BusError) -> BusMessage
    {
        try call(destination, path, interface, member, values: strings.map { .string($0) }, timeout: 2_000_000)
    }

    /// A method call message carrying `values`; the caller unrefs it. The
    /// corresponding C function is `sd_bus_message_new_method_call`.
    private func methodCall(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ values: [BusValue]
    ) throws(BusError) -> OpaquePointer {
        var request: OpaquePointer?
        _ = try busCall("new call \(member)") {
            sd_bus_message_new_method_call(bus, &request, destination, path, interface, member)
        }
        guard let request else { throw BusError(call: "new call \(member)", errno: .noMemory, name: nil) }
        let outgoing = BusMessage(borrowing: request)
        for v in values where !outgoing.append(v) {
            sd_bus_message_unref(request)
            throw BusError(call: "append to \(member)", errno: .invalidArgument, name: nil)
        }
        return request
    }

    /// Calls a bus method and waits (`timeout` microseconds at most). A D-Bus error
    /// reply throws with its name. The corresponding C function is `sd_bus_call`.
    func call(
        _ destination: String, _ path: String, _ interface: String, _ member: String, values: [BusValue],
        timeout: UInt64
    ) throws(BusError) -> BusMessage {
        let request = try methodCall(destination, path, interface, member, values)
        defer { sd_bus_message_unref(request) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        _ = try busCall(
            "\(interface).\(member)", name: { error.name.map { String(cString: $0) } }
        ) {
            sd_bus_call(bus, request, timeout, &error, &reply)
        }
        guard let reply else { throw BusError(call: "\(interface).\(member)", errno: .badMessage, name: nil) }
        return BusMessage(adopting: reply)
    }

    /// Calls a method without waiting: `done` gets the reply, or an error reply
    /// (failure or 25 s timeout). The corresponding C function is `sd_bus_call_async`.
    func callAsync(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ values: [BusValue],
        _ done: @escaping (BusMessage) -> Void
    ) throws(BusError) {
        let request = try methodCall(destination, path, interface, member, values)
        defer { sd_bus_message_unref(request) }
        // Released by the callback, which sd-bus calls exactly once (floating slot).
        let box = Unmanaged.passRetained(HandlerBox(done)).toOpaque()
        do {
            _ = try busCall("\(interface).\(member)") {
                sd_bus_call_async(
                    bus, nil, request,
                    { message, userdata, _ in
                        guard let userdata else { return 0 }
                        let handler = Unmanaged<HandlerBox>.fromOpaque(userdata).takeRetainedValue()
                        if let message { handler.body(BusMessage(borrowing: message)) }
                        return 0
                    }, box, 25_000_000)
            }
        } catch {
            Unmanaged<HandlerBox>.fromOpaque(box).release()
            throw error
        }
    }

    /// Sends a method return with `values`. The corresponding C functions are
    /// `sd_bus_message_new_method_return` and `sd_bus_send`.
    func reply(to call: BusMessage, _ values: [BusValue]) {
        var reply: OpaquePointer?
        guard sd_bus_message_new_method_return(call.message, &reply) >= 0, let reply else { return }
        defer { sd_bus_message_unref(reply) }
        let outgoing = BusMessage(borrowing: reply)
        for v in values { guard outgoing.append(v) else { return } }
        _ = sd_bus_send(bus, reply, nil)
    }

    /// Sends an error reply. The corresponding C function is `sd_bus_reply_method_error`.
    func replyError(to call: BusMessage, name: String, message: String) {
        name.withCString { n in
            message.withCString { m in
                var error = sd_bus_error(name: n, message: m, _need_free: 0)
                _ = sd_bus_reply_method_error(call.message, &error)
            }
        }
    }

    /// Emits a signal, to everyone or (`destination`) to one client only. The
    /// corresponding C functions are `sd_bus_message_new_signal`, `sd_bus_message_set_destination`, `sd_bus_send`.
    func emit(
        _ path: String, _ interface: String, _ member: String, _ values: [BusValue], to destination: String? = nil
    ) {
        var signal: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        if let destination { _ = sd_bus_message_set_destination(signal, destination) }
        let outgoing = BusMessage(borrowing: signal)
        for v in values { guard outgoing.append(v) else { return } }
        _ = sd_bus_send(bus, signal, nil)
    }

    /// Processes pending messages until none is left; returns how many it handled.
    @discardableResult
    func processAll() throws(BusError) -> Int {
        var handled = 0
        while try busCall("sd_bus_process", { sd_bus_process(bus, nil) }) > 0 { handled += 1 }
        return handled
    }

    /// Waits until the bus or `wake` is readable, or sd-bus's own timeout passes, or
    /// `limit` milliseconds (nil: no limit); an interrupted wait returns (the loop
    /// processes and waits again). Returns false when it gave up after `limit` with
    /// nothing to read. The corresponding C functions are `sd_bus_get_fd`,
    /// `sd_bus_get_events`, `sd_bus_get_timeout`, `poll`.
    @discardableResult
    func wait(orReadable wake: FileDescriptor, limit: Int32? = nil) throws(BusError) -> Bool {
        let fd = try busCall("sd_bus_get_fd") { sd_bus_get_fd(bus) }
        let events = try busCall("sd_bus_get_events") { sd_bus_get_events(bus) }
        var timeout: UInt64 = 0
        _ = sd_bus_get_timeout(bus, &timeout)
        var waitMilliseconds: Int32 = -1
        if timeout != UInt64.max {
            // sd-bus's timeout is on CLOCK_MONOTONIC, in microseconds.
            let nowMicros = UInt64(MonotonicClock.nanoseconds() / 1000)
            waitMilliseconds = timeout <= nowMicros ? 0 : Int32(min((timeout - nowMicros) / 1000 + 1, 60_000))
        }
        var limited = false
        if let limit, waitMilliseconds < 0 || limit < waitMilliseconds {
            waitMilliseconds = limit
            limited = true
        }
        let watched = [(FileDescriptor(rawValue: fd), events: Int16(events)), (wake, events: Int16(POLLIN))]
        do {
            let ready = try FileDescriptor.poll(watched, milliseconds: waitMilliseconds)
            return !limited || ready.contains { $0 != 0 }
        } catch {
            throw BusError(call: "poll", errno: error, name: nil)
        }
    }
}

/// The handler of an ``BusConnection/addFallback(_:_:)`` path: runs the handler
/// registered with it, and tells sd-bus the call is handled (1).
private func handled(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    BusConnection.dispatch(message, userdata)
    return 1
}

/// The handler of an ``BusConnection/addMatch(_:_:)`` rule: runs the handler
/// registered with it, and lets other matches see the message too (0).
private func observed(
    _ message: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _: UnsafeMutablePointer<sd_bus_error>?
) -> Int32 {
    BusConnection.dispatch(message, userdata)
    return 0
}

/// A non-blocking pipe that another thread writes to wake the bus loop.
final class WakeSignal: Sendable {
    /// The read end, polled by the bus loop.
    let fd: FileDescriptor
    private let writeEnd: FileDescriptor

    /// The corresponding C function is `pipe2`.
    init() throws(BusError) {
        do {
            let ends = try FileDescriptor.pipe(nonBlocking: true)
            fd = ends.read
            writeEnd = ends.write
        } catch {
            throw BusError(call: "pipe", errno: error, name: nil)
        }
    }

    /// Wakes the loop (a full pipe already will). The corresponding C function is `write`.
    func wake() {
        withUnsafeBytes(of: UInt8(1)) { _ = try? writeEnd.write($0) }
    }

    /// Clears pending wakes. The corresponding C function is `read`.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        buffer.withUnsafeMutableBytes { raw in
            while let n = try? fd.read(into: raw), n > 0 {}
        }
    }
}
