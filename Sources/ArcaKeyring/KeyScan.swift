/// The fallback that finds arcad's keys without its ledger (after a restart of
/// arcad, or in another process): every ring and item key arcad makes is owned
/// by root and carries the uid it was made for as its group id (group
/// permissions are zero, so the tag grants nothing). `/proc/keys` lists every
/// key root may view, with owner and group, so the keys of one uid are found
/// without looking at any keyring that uid controls.
enum KeyScan {
    /// One line of `/proc/keys`:
    ///
    ///     <serial hex> <flags> <usage> <expiry> <perm hex> <uid> <gid> <type> <description>: <summary>
    struct Entry: Equatable {
        var serial: KeySerial
        var uid: UInt32
        var gid: UInt32
        var type: String
    }

    static func parse(line: Substring) -> Entry? {
        let words = line.split(separator: " ", maxSplits: 8, omittingEmptySubsequences: true)
        guard words.count >= 8, let serial = Int32(words[0], radix: 16), let uid = UInt32(words[5]),
            let gid = UInt32(words[6])
        else { return nil }
        return Entry(serial: KeySerial(rawValue: serial), uid: uid, gid: gid, type: String(words[7]))
    }

    /// Root-owned keys and keyrings tagged with `uid`, confirmed with `keyctl_describe`
    /// (the description must start with `arca:`).
    static func tagged(uid: UInt32) throws(KeyringError) -> [(serial: KeySerial, info: KeyDescription)] {
        let path = "/proc/keys"
        guard let text = ProcFile.read(path) else { throw KeyringError.procfs(path: path) }
        var found: [(KeySerial, KeyDescription)] = []
        for line in text.split(separator: "\n") {
            guard let entry = parse(line: line), entry.uid == 0, entry.gid == uid,
                entry.type == "keyring" || entry.type == "user",
                let info = try? entry.serial.describe(), info.uid == 0, info.gid == uid,
                info.description.hasPrefix("arca:")
            else { continue }
            found.append((entry.serial, info))
        }
        return found
    }

    /// What to destroy to remove `uid`'s ring of `description` without the ledger:
    /// every tagged ring of that description, what it links, and every tagged item
    /// key that no other tagged ring of the uid (its other class, a service ring)
    /// still links.
    static func orphans(uid: UInt32, ringDescription: String) throws(KeyringError)
        -> (rings: [KeySerial], keys: [KeySerial])
    {
        let tagged = try tagged(uid: uid)
        var rings: [KeySerial] = []
        var keys: [KeySerial] = []
        var keep = Set<KeySerial>()
        for (serial, info) in tagged where info.type == "keyring" {
            let links = (try? serial.links()) ?? []
            if info.description == ringDescription {
                rings.append(serial)
                keys.append(contentsOf: links)
            } else {
                keep.formUnion(links)
            }
        }
        for (serial, info) in tagged where info.type == "user" && !keep.contains(serial) {
            keys.append(serial)
        }
        var seen = Set<KeySerial>()
        return (rings, keys.filter { seen.insert($0).inserted })
    }
}
