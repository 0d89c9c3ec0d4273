import ArcaSystem
import FoundationEssentials

/// One event of Syncthing's event stream (GET /rest/events), the fields the agent reads.
public struct SyncthingEvent: Sendable, Equatable, Decodable {
    /// The event's id: the next long-poll asks for events after the highest one seen.
    public var id: Int
    /// The event type (`ItemFinished`, `LocalIndexUpdated`, ...).
    public var type: String
    /// The folder the event is about, if any.
    public var folder: String?
    /// The item (path in the folder) of an ItemFinished.
    public var item: String?

    enum CodingKeys: String, CodingKey { case id, type, data }
    enum DataKeys: String, CodingKey { case folder, item }

    public init(id: Int, type: String, folder: String?, item: String?) {
        self.id = id
        self.type = type
        self.folder = folder
        self.item = item
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(Int.self, forKey: .id)
        type = try c.decode(String.self, forKey: .type)
        let data = try? c.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
        folder = try? data?.decodeIfPresent(String.self, forKey: .folder)
        item = try? data?.decodeIfPresent(String.self, forKey: .item)
    }
}

/// The user's own Syncthing over its REST API on 127.0.0.1 (X-API-Key): device and folder
/// set-up, scan triggers, and the event long-poll that wakes the agent. One connection per
/// call; a call is bounded by its timeout.
public struct SyncthingClient: Sendable {
    /// Where the API is.
    public let endpoint: SyncthingEndpoint

    /// A client of `endpoint`.
    public init(endpoint: SyncthingEndpoint) { self.endpoint = endpoint }

    /// This instance's device id (GET /rest/system/status, `myID`).
    public func deviceID() throws(SyncAgentError) -> String {
        struct Status: Decodable { var myID: String }
        return try decode(Status.self, try call("GET", "/rest/system/status")).myID
    }

    /// Adds `device` (with its addresses; `dynamic` for discovery) unless it is configured already.
    public func addDevice(_ device: String, name: String, addresses: [String]) throws(SyncAgentError) {
        struct Device: Encodable {
            var deviceID: String
            var name: String
            var addresses: [String]
        }
        if (try? call("GET", "/rest/config/devices/\(device)")) != nil { return }
        _ = try call(
            "PUT", "/rest/config/devices/\(device)",
            body: encode(Device(deviceID: device, name: name, addresses: addresses)))
    }

    /// The folder's path and the device ids it is shared with, or nil when there is no such folder.
    public func folder(_ folder: String) throws(SyncAgentError) -> (path: String, devices: [String])? {
        struct Folder: Decodable {
            struct Member: Decodable { var deviceID: String }
            var path: String
            var devices: [Member]
        }
        let reply: [UInt8]
        do { reply = try call("GET", "/rest/config/folders/\(folder)") } catch {
            if case .syncthing(let m) = error, m.hasPrefix("HTTP 404") { return nil }
            throw error
        }
        let decoded = try decode(Folder.self, reply)
        return (decoded.path, decoded.devices.map(\.deviceID))
    }

    /// The folder's path, or nil when there is no such folder.
    public func folderPath(_ folder: String) throws(SyncAgentError) -> String? { try self.folder(folder)?.path }

    /// Creates the folder at `path` shared with `devices` if absent, else adds the missing devices.
    /// The folder is rescanned by the agent (REST scans), so the periodic rescan is rare.
    public func shareFolder(_ folder: String, path: String, with devices: [String]) throws(SyncAgentError) {
        struct Member: Codable { var deviceID: String }
        struct NewFolder: Encodable {
            var id: String
            var label: String
            var path: String
            var type = "sendreceive"
            var devices: [Member]
            var rescanIntervalS = 3600
            var fsWatcherEnabled = false
        }
        struct Patch: Encodable { var devices: [Member] }
        if let existing = try self.folder(folder)?.devices {
            let missing = devices.filter { !existing.contains($0) }
            guard !missing.isEmpty else { return }
            let all = (existing + missing).map { Member(deviceID: $0) }
            _ = try call("PATCH", "/rest/config/folders/\(folder)", body: encode(Patch(devices: all)))
        } else {
            let members = devices.map { Member(deviceID: $0) }
            _ = try call(
                "PUT", "/rest/config/folders/\(folder)",
                body: encode(NewFolder(id: folder, label: "Arca sync", path: path, devices: members)))
        }
    }

    /// Asks Syncthing to rescan `sub` (a path in the folder) now (POST /rest/db/scan).
    public func scan(_ folder: String, sub: String?) throws(SyncAgentError) {
        var target = "/rest/db/scan?folder=\(Self.query(folder))"
        if let sub { target += "&sub=\(Self.query(sub))" }
        _ = try call("POST", target)
    }

    /// Events after `since` of the given types, waiting up to `timeoutSeconds` for the first one.
    public func events(since: Int, types: [String], timeoutSeconds: Int) throws(SyncAgentError) -> [SyncthingEvent] {
        let target = "/rest/events?since=\(since)&timeout=\(timeoutSeconds)&events=\(types.joined(separator: ","))"
        let reply = try call("GET", target, timeoutMilliseconds: (timeoutSeconds + 10) * 1000)
        return try decode([SyncthingEvent].self, reply)
    }

    /// One REST call; the body of a 2xx reply.
    func call(_ method: String, _ target: String, body: [UInt8]? = nil, timeoutMilliseconds: Int = 10_000)
        throws(SyncAgentError) -> [UInt8]
    {
        let request = HTTPMessage.request(
            method: method, target: target, port: endpoint.port, apiKey: endpoint.apiKey, body: body)
        let bytes: [UInt8]
        do {
            let fd = try LoopbackSocket.connect(port: endpoint.port, timeoutMilliseconds: timeoutMilliseconds)
            defer { fd.close() }
            try LoopbackSocket.sendAll(fd, request)
            bytes = try LoopbackSocket.readToEnd(fd, limit: 64 << 20)
        } catch {
            throw .syncthing("127.0.0.1:\(endpoint.port): \(error) (is Syncthing running?)")
        }
        guard let response = HTTPMessage.parse(bytes) else {
            throw .syncthing("\(method) \(target): not an HTTP reply")
        }
        guard (200...299).contains(response.status) else {
            let text = String(decoding: response.body.prefix(200), as: UTF8.self).trimmed
            throw .syncthing("HTTP \(response.status) for \(method) \(Self.path(target)): \(text)")
        }
        return response.body
    }

    func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws(SyncAgentError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(bytes)) } catch {
            throw .syncthing("unexpected JSON from the REST API: \(error)")
        }
    }

    func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Encoding these plain structs of strings and numbers cannot fail.
        (try? Array(JSONEncoder().encode(value))) ?? Array("{}".utf8)
    }

    /// Percent-encodes a query value (folder ids and paths are ASCII in Arca's layout).
    static func query(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "/"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                let digits = Array("0123456789ABCDEF")
                out += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
            }
        }
        return out
    }

    static func path(_ target: String) -> String { String(target.prefix { $0 != "?" }) }
}
