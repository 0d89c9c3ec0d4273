import ArcaProtocol
import ArcaSystem
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// `/etc/arca/fleet.conf` (arca-fleetd(8)): `key = value` lines, `#` comments.
///
///     endpoints = https://10.0.0.1:2379,https://10.0.0.2:2379,https://10.0.0.3:2379
///     cacert = /etc/arca/fleet/ca.pem
///     cert = /etc/arca/fleet/host.pem
///     key = /etc/arca/fleet/host-key.pem
///     host = web-1
///     prefix = /arca/v1/
///     admin_key = <base64 Ed25519 public key, pinned by `arca fleet join`>
///     state_dir = /var/lib/arca/fleet
///     socket = /run/arca/arcad.sock
public struct FleetConfig: Sendable, Equatable {
    public static let defaultPath = "/etc/arca/fleet.conf"
    public var etcd: EtcdEndpoint
    public var host: String?
    public var prefix: String
    public var adminKey: [UInt8]?
    public var stateDirectory: String
    public var socket: String
    /// Seconds between full re-reads while the watch is quiet (also the ack heartbeat).
    public var resyncSeconds: Int

    /// Parses the text of a fleet.conf; unknown keys and bad values are usage errors.
    public static func parse(_ text: String) throws(FleetError) -> FleetConfig {
        var values: [String: String] = [:]
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmed
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: "=", maxSplits: 1).map { String($0).trimmed }
            guard parts.count == 2,
                [
                    "endpoints", "cacert", "cert", "key", "host", "prefix", "admin_key", "state_dir", "socket",
                    "resync_seconds", "command_timeout",
                ].contains(parts[0])
            else { throw .usage("fleet.conf line \(number + 1): not a known `key = value`") }
            values[parts[0]] = parts[1]
        }
        guard let endpoints = values["endpoints"], let ca = values["cacert"], let cert = values["cert"],
            let key = values["key"]
        else { throw .usage("fleet.conf needs endpoints, cacert, cert and key") }
        var adminKey: [UInt8]?
        if let text = values["admin_key"] {
            guard let data = Data(base64Encoded: text), data.count == FleetSodium.signPublicKeyLength else {
                throw .usage("fleet.conf: admin_key is not a base64 Ed25519 public key")
            }
            adminKey = Array(data)
        }
        if let host = values["host"], !FleetName.isValid(host) { throw .usage("fleet.conf: bad host name") }
        var prefix = values["prefix"] ?? "/arca/v1/"
        if !prefix.hasSuffix("/") { prefix += "/" }
        guard let resync = Int(values["resync_seconds"] ?? "60"), resync > 0,
            let timeout = Int(values["command_timeout"] ?? "5"), timeout > 0
        else { throw .usage("fleet.conf: resync_seconds and command_timeout are positive integers") }
        return FleetConfig(
            etcd: EtcdEndpoint(
                endpoints: endpoints.split(separator: ",").map { String($0).trimmed }, caCert: ca, cert: cert,
                key: key, commandTimeoutSeconds: timeout),
            host: values["host"], prefix: prefix, adminKey: adminKey,
            stateDirectory: values["state_dir"] ?? "/var/lib/arca/fleet",
            socket: values["socket"] ?? ArcadSocket.defaultPath, resyncSeconds: resync)
    }

    /// Reads and parses `path`.
    public static func load(_ path: String) throws(FleetError) -> FleetConfig {
        guard let text = FileIO.read(path) else { throw .usage("cannot read \(path)") }
        return try parse(String(decoding: text, as: UTF8.self))
    }

    /// `text` with `key = value` set (replacing an existing line), for `join`.
    public static func setting(_ key: String, to value: String, in text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        lines.removeAll { line in
            line.split(separator: "=", maxSplits: 1).first.map { String($0).trimmed == key } ?? false
        }
        lines.append("\(key) = \(value)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The etcd keys of this fleet.
    public var keys: FleetLayout { FleetLayout(prefix: prefix) }
}

/// The layout under the prefix (ARCHITECTURE §13).
public struct FleetLayout: Sendable {
    public var prefix: String
    public init(prefix: String) { self.prefix = prefix }
    public var head: String { prefix + "head" }
    public var hosts: String { prefix + "hosts/" }
    public var items: String { prefix + "items/" }
    public var groups: String { prefix + "groups/" }
    public func join(_ host: String) -> String { prefix + "hosts/\(host)/join" }
    public func host(_ host: String) -> String { prefix + "hosts/\(host)/pub" }
    public func manifest(_ host: String) -> String { prefix + "hosts/\(host)/manifest" }
    public func ack(_ host: String) -> String { prefix + "hosts/\(host)/ack" }
    public func item(_ id: String, _ version: UInt64) -> String { prefix + "items/\(id)/\(version)" }
    public func groupKey(_ group: String, _ epoch: UInt64, _ host: String) -> String {
        prefix + "groups/\(group)/\(epoch)/\(host)"
    }
}

extension StringProtocol {
    var trimmed: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" || first == "\r" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\r" { scalars.removeLast() }
        return String(scalars)
    }
}

/// Small whole-file reads and atomic 0600 writes, through ArcaSystem's descriptors (which
/// retry EINTR and finish short writes).
enum FileIO {
    static func read(_ path: String) -> [UInt8]? {
        guard let fd = try? FileDescriptor.open(path, O_RDONLY) else { return nil }
        defer { fd.close() }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let read = chunk.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try fd.read(into: raw) } }
            guard case .success(let n) = read else { return nil }
            if n == 0 { return result }
            result += chunk[..<n]
        }
    }

    /// Writes `bytes` to a temporary file (mode 0600), fsyncs and renames it over `path`.
    static func writeAtomically(_ path: String, _ bytes: [UInt8]) throws(FleetError) {
        let temporary = path + ".tmp"
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o600) } catch {
            throw .usage("cannot write \(path): \(String(cString: strerror(error.rawValue)))")
        }
        let written = bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try fd.writeAll(raw) } }
        guard case .success = written else {
            fd.close()
            throw .usage("cannot write \(path)")
        }
        try? fd.sync()
        fd.close()
        guard rename(temporary, path) == 0 else { throw .usage("cannot rename over \(path)") }
    }

    /// Creates `path` (mode 0700) if missing.
    static func makeDirectory(_ path: String) {
        mkdir(path, 0o700)
    }
}
