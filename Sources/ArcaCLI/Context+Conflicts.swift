import ArcaProtocol

/// `arca find --conflicts` and `arca resolve`: arcad holds the replica; the CLI lists and picks.
extension Context {
    mutating func findConflicts(json: Bool, output: inout Output) throws(CLIError) {
        let conflicts = try fetchConflicts()
        if json {
            var writer = JSONWriter()
            writer.beginArray()
            for conflict in conflicts {
                writer.beginObject()
                writer.key("item")
                writer.string(Self.hex(conflict.item))
                writer.key("versions")
                writer.beginArray()
                for v in conflict.versions {
                    writer.beginObject()
                    writer.key("version")
                    writer.string(Self.hex(v.hash))
                    writer.key("winner")
                    writer.bool(v.winner)
                    writer.key("deleted")
                    writer.bool(v.deleted)
                    writer.key("device")
                    writer.string(Self.hex(v.author))
                    writer.key("clock")
                    writer.number(v.clockMillis)
                    writer.key("attributes")
                    ItemFormat.json(Self.itemClass(v), ResultItem(attributes: v.attributes), into: &writer)
                    writer.endObject()
                }
                writer.endArray()
                writer.endObject()
            }
            writer.endArray()
            writer.flush(into: &output)
            return
        }
        for (index, conflict) in conflicts.enumerated() {
            if index > 0 { output.line("") }
            output.line("item: " + Self.hex(conflict.item))
            for v in conflict.versions {
                let role = v.winner ? (v.deleted ? "winner (deleted)" : "winner") : "sibling"
                output.line(
                    "version: \(Self.hex(v.hash).prefix(16)) \(role) device \(Self.hex(v.author).prefix(16)) "
                        + "at \(Format.isoDate(microseconds: Int64(clamping: v.clockMillis) * 1000))")
                for tag in v.attributes.keys.sorted() where tag != .itemClass && tag != .creationDate {
                    guard let value = v.attributes[tag] else { continue }
                    output.line("  " + tag.fieldName + ": " + ItemFormat.text(value))
                }
            }
        }
    }

    mutating func resolve(item: String, version: String, output: inout Output) throws(CLIError) {
        let conflicts = try fetchConflicts()
        guard let conflict = conflicts.first(where: { Self.hex($0.item) == item }) else {
            throw .status(.itemNotFound, what: "resolve", detail: "no conflict for item \(item)")
        }
        let matches = conflict.versions.filter { Self.hex($0.hash).hasPrefix(version) }
        guard matches.count == 1, let keep = matches.first else {
            throw .status(
                .itemNotFound, what: "resolve",
                detail: matches.isEmpty ? "item \(item) has no version \(version)" : "version \(version) is ambiguous")
        }
        _ = try send(.syncResolve(uid: uid, item: conflict.item, keep: keep.hash), what: "resolve")
        output.line(
            "kept version \(Self.hex(keep.hash).prefix(16)) of item \(item)" + (keep.deleted ? " (deleted)" : ""))
    }

    private mutating func fetchConflicts() throws(CLIError) -> [SyncConflict] {
        guard case .syncConflicts(let list) = try send(.syncConflicts(uid: uid), what: "find --conflicts") else {
            throw .failure(what: "find --conflicts", why: "unexpected reply from arcad")
        }
        return list
    }

    private static func itemClass(_ v: SyncVersion) -> ItemClass {
        if case .itemClass(let c) = v.attributes[.itemClass] { return c }
        return .genericPassword
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }
}
