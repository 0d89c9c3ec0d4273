import ArcaCrypto
import ArcaKeyring

/// Parks the keys arcad holds for unlocked users in root-only kernel keys, so that
/// a restart of arcad (a crash, `kill -9`, an upgrade) does not lock anyone out.
///
/// The keys live in a keyring `arcad:parked:<tag>` linked into root's user keyring,
/// which survives arcad and ends at reboot, like the classes it restores. `<tag>`
/// names the state directory, so that two arcad instances (tests) never share.
/// Keys are root-owned with possessor-only permissions.
struct KeyParking: Sendable {
    let ringDescription: String

    init(stateDirectory: String) {
        let digest = (try? KeyedHash.blake2b(Array(stateDirectory.utf8), outputLength: 16)) ?? []
        ringDescription = "arcad:parked:" + digest.prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func ring(create: Bool) -> KeySerial? {
        if let found = try? KeySerial.userKeyring.search(type: "keyring", description: ringDescription) {
            return found
        }
        guard create, let made = try? KeySerial.add(type: "keyring", description: ringDescription, payload: nil,
                                                    to: .userKeyring) else { return nil }
        try? made.setPermissions(0x3f00_0000)
        return made
    }

    private func keyDescription(_ uid: UInt32) -> String { "\(ringDescription):\(uid)" }

    /// Parks `keys` for `uid`, or removes what is parked when `keys` is nil.
    func park(uid: UInt32, keys: SecretBytes?) {
        guard let keys else {
            if let ring = ring(create: false) {
                if let key = try? ring.search(type: "user", description: keyDescription(uid)) { try? key.invalidate() }
                // Nobody parked: drop the ring too, so root's keyring does not collect
                // one empty ring per arcad state directory ever used.
                if (try? ring.links())?.allSatisfy({ (try? $0.describe()) == nil || $0 == ring }) ?? false {
                    try? ring.invalidate()
                }
            }
            return
        }
        guard let ring = ring(create: true) else {
            Log.warning("cannot park keys for uid \(uid): a restart of arcad will lock this user")
            return
        }
        do {
            let key = try KeySerial.add(type: "user", description: keyDescription(uid), payload: keys, to: ring)
            try key.setPermissions(0x3f00_0000)
        } catch {
            Log.warning("cannot park keys for uid \(uid) (\(error)): a restart of arcad will lock this user")
        }
    }

    /// Every parked uid with its keys.
    func restore() -> [(uid: UInt32, keys: SecretBytes)] {
        guard let ring = ring(create: false), let links = try? ring.links() else { return [] }
        var restored: [(UInt32, SecretBytes)] = []
        let prefix = ringDescription + ":"
        for key in links {
            guard let info = try? key.describe(), info.type == "user", info.description.hasPrefix(prefix),
                  let uid = UInt32(info.description.dropFirst(prefix.count)),
                  let keys = try? key.read() else { continue }
            restored.append((uid, keys))
        }
        return restored
    }
}
