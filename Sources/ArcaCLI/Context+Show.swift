import ArcaKeyring

/// `show`: Arca's rings in the caller's user keyring, as a `keyctl show` tree.
extension Context {
    struct ShownKey {
        var serial: Int32
        var info: KeyDescription
        var depth: Int
    }

    /// `@u`, then each `arca:*` ring linked in it, then each key of those rings.
    func shownKeys() throws(CLIError) -> [ShownKey] {
        do {
            try KeyringReader().linkSources()
        } catch {
            throw .failure(what: "show", why: error.description)
        }
        var keys: [ShownKey] = []
        do throws(KeyringErrno) {
            let user = try KeySerial.userKeyring.resolve()
            keys.append(ShownKey(serial: user.rawValue, info: try user.describe(), depth: 0))
            // Sorted by description, not link order (which depends on history),
            // so that the same vault always prints the same tree.
            let rings = try user.links().compactMap { ring -> ShownKey? in
                guard let info = try? ring.describe(), info.type == "keyring",
                    info.description.hasPrefix(KeyringItemKey.descriptionPrefix)
                else { return nil }
                return ShownKey(serial: ring.rawValue, info: info, depth: 1)
            }
            for ring in rings.sorted(by: { $0.info.description < $1.info.description }) {
                keys.append(ring)
                let items = ((try? KeySerial(rawValue: ring.serial).links()) ?? []).compactMap { item -> ShownKey? in
                    guard let info = try? item.describe() else { return nil }
                    return ShownKey(serial: item.rawValue, info: info, depth: 2)
                }
                keys += items.sorted { $0.info.description < $1.info.description }
            }
        } catch {
            throw .failure(what: "show", why: "\(error)")
        }
        return keys
    }

    func show(json: Bool, output: inout Output) throws(CLIError) {
        let keys = try shownKeys()
        if json {
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("uid")
            writer.number(uid)
            writer.key("keys")
            writer.beginArray()
            for key in keys {
                writer.beginObject()
                writer.key("id")
                writer.number(key.serial)
                writer.key("depth")
                writer.number(key.depth)
                writer.key("type")
                writer.string(key.info.type)
                writer.key("permissions")
                writer.string(hex8(key.info.permissions))
                writer.key("uid")
                writer.number(key.info.uid)
                writer.key("gid")
                writer.number(key.info.gid)
                writer.key("description")
                writer.string(key.info.description)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
            writer.flush(into: &output)
            return
        }
        output.line("Arca keyrings of uid \(uid)")
        for key in keys {
            let indent = key.depth == 0 ? "" : String(repeating: "    ", count: key.depth - 1) + " \\_ "
            let id = String(key.serial)
            let uidText = String(key.info.uid)
            let gidText = String(key.info.gid)
            output.line(
                String(repeating: " ", count: max(0, 10 - id.count)) + id + " " + hex8(key.info.permissions) + " "
                    + String(repeating: " ", count: max(0, 5 - uidText.count)) + uidText + " "
                    + String(repeating: " ", count: max(0, 5 - gidText.count)) + gidText + "  " + indent
                    + key.info.type + ": " + key.info.description)
        }
    }

    func hex8(_ value: UInt32) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }
}
