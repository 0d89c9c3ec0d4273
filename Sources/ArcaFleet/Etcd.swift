import FoundationEssentials

/// One key of etcd as read.
public struct EtcdKeyValue: Sendable, Equatable {
    public var key: String
    public var value: [UInt8]
    public var modRevision: Int64
}

/// Keys read at one revision.
public struct EtcdRange: Sendable, Equatable {
    /// The store's revision the read saw.
    public var revision: Int64
    public var values: [EtcdKeyValue]

    /// The value at `key`, if present.
    public subscript(key: String) -> EtcdKeyValue? { values.first { $0.key == key } }
}

/// A condition of a transaction.
public enum EtcdCompare: Sendable, Equatable {
    /// The key was last modified at this revision.
    case modRevision(String, Int64)
    /// The key does not exist.
    case absent(String)
}

/// A write of a transaction.
public enum EtcdWrite: Sendable, Equatable {
    case put(String, [UInt8])
    case delete(String)
    case deletePrefix(String)
}

/// What a watch reports.
public enum EtcdWatchEvent: Sendable, Equatable {
    /// Something changed under the watched key.
    case changed
    /// Nothing within the timeout.
    case idle
    /// The watch ended; `compacted` when the start revision is gone.
    case ended(compacted: Bool, message: String)
}

/// A running watch.
public protocol EtcdWatch: AnyObject {
    func next(timeoutMilliseconds: Int32) -> EtcdWatchEvent
    func cancel()
}

/// The one small interface the fleet needs from etcd (v3 API).
public protocol EtcdClient {
    /// `key`, or every key under it with `prefix`.
    func range(_ key: String, prefix: Bool) throws(FleetError) -> EtcdRange
    /// Several keys at one revision (one transaction of reads).
    func read(_ keys: [String]) throws(FleetError) -> EtcdRange
    /// An unconditional write of one key.
    func put(_ key: String, _ value: [UInt8]) throws(FleetError)
    /// `writes` if every compare holds; returns whether they did.
    func transaction(_ compares: [EtcdCompare], _ writes: [EtcdWrite]) throws(FleetError) -> Bool
    /// Watches `key` from `revision` on.
    func watch(_ key: String, fromRevision revision: Int64) throws(FleetError) -> EtcdWatch
}

/// Where etcd is and how to authenticate to it (mTLS).
public struct EtcdEndpoint: Sendable, Equatable {
    public var endpoints: [String]
    public var caCert: String
    public var cert: String
    public var key: String
    public var commandTimeoutSeconds: Int

    public init(endpoints: [String], caCert: String, cert: String, key: String, commandTimeoutSeconds: Int = 5) {
        self.endpoints = endpoints
        self.caCert = caCert
        self.cert = cert
        self.key = key
        self.commandTimeoutSeconds = commandTimeoutSeconds
    }
}

/// ``EtcdClient`` over the official `etcdctl` (v3, JSON output), one child per call.
///
/// Why etcdctl rather than libcurl on the HTTP/JSON gateway: it is the client the etcd
/// project maintains, with its balancer (fail-over between members, watch resumption),
/// and it needs no C binding (libcurl's setopt is variadic, which Swift cannot call).
/// The cost is a process start per call (~20 ms), paid only on change.
public final class EtcdCtl: EtcdClient, Sendable {
    let endpoint: EtcdEndpoint
    let path: String

    public init(_ endpoint: EtcdEndpoint, path: String = "/usr/bin/etcdctl") {
        self.endpoint = endpoint
        self.path = path
    }

    var common: [String] {
        [
            "--endpoints=" + endpoint.endpoints.joined(separator: ","), "--cacert=" + endpoint.caCert,
            "--cert=" + endpoint.cert, "--key=" + endpoint.key, "--dial-timeout=2s",
            "--command-timeout=\(endpoint.commandTimeoutSeconds)s", "-w", "json",
        ]
    }

    func run(_ arguments: [String], input: [UInt8] = []) throws(FleetError) -> [UInt8] {
        let child = try ChildProcess(path: path, arguments: common + arguments, input: input)
        let result = child.finish()
        guard result.status == 0 else { throw .etcd(Self.summarize(result.error)) }
        return result.output
    }

    /// The last `Error:` line of etcdctl's stderr (its log lines are JSON noise).
    static func summarize(_ text: String) -> String {
        let lines = text.split(separator: "\n").map(String.init)
        if let error = lines.last(where: { $0.hasPrefix("Error:") }) {
            return error.dropFirst(6).trimmed
        }
        return lines.last ?? "etcdctl failed"
    }

    public func range(_ key: String, prefix: Bool) throws(FleetError) -> EtcdRange {
        let output = try run(["get", key] + (prefix ? ["--prefix"] : []))
        return try EtcdJSON.range(output)
    }

    public func read(_ keys: [String]) throws(FleetError) -> EtcdRange {
        let script = "\n" + keys.map { "get \($0)\n" }.joined() + "\n\n"
        let output = try run(["txn"], input: Array(script.utf8))
        return try EtcdJSON.transactionReads(output)
    }

    public func put(_ key: String, _ value: [UInt8]) throws(FleetError) {
        _ = try run(["put", key], input: value)
    }

    public func transaction(_ compares: [EtcdCompare], _ writes: [EtcdWrite]) throws(FleetError) -> Bool {
        var script = ""
        for compare in compares {
            switch compare {
            case .modRevision(let key, let revision): script += "mod(\"\(key)\") = \"\(revision)\"\n"
            case .absent(let key): script += "create(\"\(key)\") = \"0\"\n"
            }
        }
        script += "\n"
        for write in writes {
            switch write {
            case .put(let key, let value): script += "put \(key) \(EtcdJSON.quoted(value))\n"
            case .delete(let key): script += "del \(key)\n"
            case .deletePrefix(let key): script += "del --prefix \(key)\n"
            }
        }
        script += "\n\n"
        let output = try run(["txn"], input: Array(script.utf8))
        return try EtcdJSON.succeeded(output)
    }

    public func watch(_ key: String, fromRevision revision: Int64) throws(FleetError) -> EtcdWatch {
        let child = try ChildProcess(
            path: path, arguments: common + ["watch", key, "--rev", String(max(revision, 1))], input: [])
        return EtcdCtlWatch(child)
    }
}

final class EtcdCtlWatch: EtcdWatch {
    let child: ChildProcess

    init(_ child: ChildProcess) { self.child = child }

    func next(timeoutMilliseconds: Int32) -> EtcdWatchEvent {
        guard let line = child.readLine(timeoutMilliseconds: timeoutMilliseconds) else {
            let status = child.waitForExit()
            return .ended(compacted: false, message: "watch ended (\(status)): " + EtcdCtl.summarize(child.errorOutput))
        }
        if line.isEmpty { return .idle }
        guard let response = try? JSONDecoder().decode(EtcdJSON.WatchResponse.self, from: Data(line)) else {
            return .changed
        }
        if response.Canceled == true {
            child.terminate()
            let compacted = (response.CompactRevision ?? 0) > 0
            return .ended(
                compacted: compacted,
                message: compacted
                    ? "required revision has been compacted (compact revision \(response.CompactRevision ?? 0))"
                    : "watch canceled")
        }
        return (response.Events ?? []).isEmpty ? .idle : .changed
    }

    func cancel() { child.terminate() }
}

/// etcdctl's JSON output (`-w json`): keys and values base64, revisions as numbers.
enum EtcdJSON {
    struct Header: Decodable { var revision: Int64? }
    struct KV: Decodable {
        var key: Data
        var value: Data?
        var mod_revision: Int64?
    }
    struct RangeResponse: Decodable {
        var header: Header
        var kvs: [KV]?
    }
    struct TxnResponse: Decodable {
        struct Union: Decodable {
            struct Inner: Decodable { var ResponseRange: RangeBody? }
            struct RangeBody: Decodable { var kvs: [KV]? }
            var Response: Inner?
        }
        var header: Header
        var succeeded: Bool?
        var responses: [Union]?
    }
    struct WatchResponse: Decodable {
        var Events: [Event]?
        var CompactRevision: Int64?
        var Canceled: Bool?
        struct Event: Decodable {}
    }

    static func values(_ kvs: [KV]?) -> [EtcdKeyValue] {
        (kvs ?? []).map {
            EtcdKeyValue(
                key: String(decoding: $0.key, as: UTF8.self), value: Array($0.value ?? Data()),
                modRevision: $0.mod_revision ?? 0)
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ output: [UInt8]) throws(FleetError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(output)) } catch {
            throw .etcd("unexpected etcdctl output")
        }
    }

    static func range(_ output: [UInt8]) throws(FleetError) -> EtcdRange {
        let response = try decode(RangeResponse.self, output)
        return EtcdRange(revision: response.header.revision ?? 0, values: values(response.kvs))
    }

    static func transactionReads(_ output: [UInt8]) throws(FleetError) -> EtcdRange {
        let response = try decode(TxnResponse.self, output)
        let kvs = (response.responses ?? []).flatMap { values($0.Response?.ResponseRange?.kvs) }
        return EtcdRange(revision: response.header.revision ?? 0, values: kvs)
    }

    static func succeeded(_ output: [UInt8]) throws(FleetError) -> Bool {
        try decode(TxnResponse.self, output).succeeded ?? false
    }

    /// A value as etcdctl's txn parser reads it: a Go-quoted string. Our values are
    /// JSON envelopes (printable ASCII), so escaping `"` and `\` is enough; anything
    /// else is escaped as \xNN.
    static func quoted(_ value: [UInt8]) -> String {
        var text = "\""
        for byte in value {
            switch byte {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7f: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\x" + String(byte, radix: 16).leftPadded(to: 2)
            }
        }
        return text + "\""
    }
}
