import FoundationEssentials

/// The output of `hosts` and `status` (schema in arca-fleetd(8)).
enum FleetReport {
    struct HostLine: Codable {
        var host: String
        var state: String
        var groups: [String]
    }

    struct StatusLine: Codable {
        var host: String
        var fleetSeq: UInt64
        var appliedSeq: UInt64?
        var revision: Int64?
        var lastSeen: Int64?
        var errors: [String]
    }

    struct LocalLine: Codable {
        var host: String
        var appliedSeq: UInt64
        var revision: Int64
        var notAfter: Int64
        var items: [String]
        var lastContact: Int64?
        var outOfTouchSince: Int64?
        var errors: [String]
    }

    static func json<T: Encodable>(_ value: T) -> String {
        ((try? Wire.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null") + "\n"
    }

    static func hosts(_ snapshot: FleetSnapshot, json: Bool) -> String {
        let lines =
            snapshot.hosts.values.map { HostLine(host: $0.host, state: "approved", groups: $0.groups) }
            + snapshot.joins.values.map { HostLine(host: $0.host, state: "pending", groups: []) }
        let sorted = lines.sorted { $0.host < $1.host }
        if json { return Self.json(sorted) }
        return sorted.map { "\($0.host) \($0.state) \($0.groups.joined(separator: ","))\n" }.joined()
    }

    static func status(_ snapshot: FleetSnapshot, json: Bool) -> String {
        var lines = snapshot.hosts.keys.sorted().map { name in
            let ack = snapshot.acks[name]
            return StatusLine(
                host: name, fleetSeq: snapshot.head.seq, appliedSeq: ack?.seq, revision: ack?.revision,
                lastSeen: ack?.at, errors: ack?.errors ?? [])
        }
        let rejected = snapshot.rejected.sorted()
        if json {
            struct Report: Codable {
                var hosts: [StatusLine]
                var rejectedKeys: [String]
            }
            return Self.json(Report(hosts: lines, rejectedKeys: rejected))
        }
        var text = ""
        for line in lines {
            let applied = line.appliedSeq.map(String.init) ?? "-"
            let seen = line.lastSeen.map(Self.timestamp) ?? "never"
            text +=
                "\(line.host) seq \(applied)/\(line.fleetSeq) revision \(line.revision.map(String.init) ?? "-") "
                + "last seen \(seen)" + (line.errors.isEmpty ? "" : " errors: " + line.errors.joined(separator: "; "))
                + "\n"
        }
        for key in rejected { text += "rejected (not signed by the admin): \(key)\n" }
        lines.removeAll()
        return text
    }

    static func local(_ state: HostState, host: String, json: Bool) -> String {
        let line = LocalLine(
            host: host, appliedSeq: state.seq, revision: state.revision, notAfter: state.notAfter,
            items: state.items.values.map { "\($0.service)/\($0.account) v\($0.version)" }.sorted(),
            lastContact: state.lastContact, outOfTouchSince: state.outOfTouchSince, errors: state.errors)
        if json { return Self.json(line) }
        var text = "\(host) seq \(state.seq) revision \(state.revision) not-after \(timestamp(state.notAfter))\n"
        for item in line.items { text += "  \(item)\n" }
        if let since = state.outOfTouchSince { text += "out of touch with etcd since \(timestamp(since))\n" }
        for error in state.errors { text += "error: \(error)\n" }
        return text
    }

    /// Unix seconds as ISO 8601 UTC.
    static func timestamp(_ seconds: Int64) -> String {
        Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
    }
}
