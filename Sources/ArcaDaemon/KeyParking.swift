import ArcaCrypto
import ArcaKeyring
import Synchronization

/// Parks the keys arcad holds for unlocked users in root-only kernel keys, so that
/// a restart of arcad (a crash, `kill -9`, an upgrade) does not lock anyone out.
///
/// The keys live in a keyring `arcad:parked:<tag>` linked into root's user keyring,
/// which survives arcad and ends at reboot, like the classes it restores. `<tag>`
/// names the state directory, so that two arcad instances (tests) never share.
///
/// The ring and keys are root-owned with owner-only permissions (`0x003f0000`):
/// root's `@u` is reachable from any process that inherited a root session
/// keyring linking it (`su`, `sudo -u`, `runuser` without pam_keyinit), so a
/// possessor permission would let that user read every parked class key. Only a
/// process with fsuid 0 may read them. Each is made in the thread keyring, given
/// these permissions there, and only then linked where others can reach it.
///
/// Every lock-state change re-parks (a login parks twice: at unlock and at the last
/// close), so after the first park of a uid its key is updated in place: one
/// `keyctl_describe` to check that the serial still names this parked key, and one
/// `keyctl_update`, which gives the key its new payload and frees the old one with
/// `kfree_sensitive` (zeroed, as an invalidated key's is). The full path searched root's
/// `@u`, staged a new key and invalidated the old one: eight calls, and the invalidation
/// wakes the kernel's key garbage collector in the middle of a login.
struct KeyParking: Sendable {
    let ringDescription: String
    /// Owner (root) everything; possessors, group and others nothing.
    static let permissions: KeyPermissions = .userAll
    /// The key parked for each uid by this process, updated in place by the next park.
    private let parked = ParkedSerials()

    init(stateDirectory: String) {
        let digest = (try? KeyedHash.blake2b(Array(stateDirectory.utf8), outputLength: 16)) ?? []
        ringDescription =
            "arcad:parked:" + digest.prefix(6).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private func ring(create: Bool) -> KeySerial? {
        if let found = try? KeySerial.userKeyring.search(type: "keyring", description: ringDescription) {
            // A ring from an arcad that gave possessors access: fix it before use.
            if let info = try? found.describe(), info.uid == 0, info.permissions != Self.permissions.rawValue {
                tighten(found)
            }
            return found
        }
        guard create, let made = try? staged(type: "keyring", description: ringDescription, payload: nil) else {
            return nil
        }
        do {
            try made.link(into: .userKeyring)
        } catch {
            try? made.invalidate()
            return nil
        }
        try? made.unlink(from: .threadKeyring)
        return made
    }

    /// A root-owned key with the parking permissions, linked only into the thread keyring.
    private func staged(type: String, description: String, payload: SecretBytes?) throws -> KeySerial {
        let key = try KeySerial.add(type: type, description: description, payload: payload, to: .threadKeyring)
        do {
            try key.setPermissions(Self.permissions)
        } catch {
            try? key.invalidate()
            throw error
        }
        return key
    }

    /// Puts owner-only permissions on a ring and its keys parked by an older arcad.
    /// Possessor setattr (which those had) lets arcad change them.
    private func tighten(_ ring: KeySerial) {
        for key in (try? ring.links()) ?? [] { try? key.setPermissions(Self.permissions) }
        try? ring.setPermissions(Self.permissions)
    }

    private func keyDescription(_ uid: UInt32) -> String { "\(ringDescription):\(uid)" }

    /// Parks `keys` for `uid`, or removes what is parked when `keys` is nil.
    func park(uid: UInt32, keys: SecretBytes?) {
        guard let keys else {
            let cached = parked.get(uid)
            parked.set(uid, nil)
            // Serialised with other uids' parks: dropping the ring while another thread
            // links a key into it would lose that key until its next park.
            parked.changingRing {
                guard let ring = ring(create: false) else { return }
                // The key this process parked, if it still is that key; else a search (parked
                // by an earlier arcad and not restored, or replaced under us).
                if let cached, isParkedKey(cached, uid: uid) {
                    try? cached.invalidate()
                } else if let key = try? ring.search(type: "user", description: keyDescription(uid)) {
                    try? key.invalidate()
                }
                // Nobody parked: drop the ring too, so root's keyring does not collect
                // one empty ring per arcad state directory ever used.
                if (try? ring.links())?.allSatisfy({ (try? $0.describe()) == nil || $0 == ring }) ?? false {
                    try? ring.invalidate()
                }
            }
            return
        }
        if let serial = parked.get(uid), updateInPlace(serial, uid: uid, keys: keys) { return }
        parked.set(uid, nil)
        parked.changingRing { parkAnew(uid: uid, keys: keys) }
    }

    /// Stages `keys` as a new parked key for `uid` in the ring (created if missing) and drops
    /// the key it replaces. Runs under `ParkedSerials.changingRing`.
    private func parkAnew(uid: UInt32, keys: SecretBytes) {
        guard let ring = ring(create: true) else {
            Log.warning("cannot park keys for uid \(uid): a restart of arcad will lock this user")
            return
        }
        do {
            let old = try? ring.search(type: "user", description: keyDescription(uid))
            let key = try staged(type: "user", description: keyDescription(uid), payload: keys)
            defer { try? key.unlink(from: .threadKeyring) }
            do {
                try key.link(into: ring)
            } catch {
                try? key.invalidate()
                throw error
            }
            if let old, old != key { try? old.invalidate() }
            parked.set(uid, key)
        } catch {
            Log.warning("cannot park keys for uid \(uid) (\(error)): a restart of arcad will lock this user")
        }
    }

    /// Replaces the payload of `serial`, the key this process parked for `uid`, if it
    /// still is that key: root-owned, of type `user`, with the parking permissions and
    /// description. A serial whose key was invalidated by someone else (and whose number
    /// the kernel may since have given to another key) is never written.
    private func updateInPlace(_ serial: KeySerial, uid: UInt32, keys: SecretBytes) -> Bool {
        guard isParkedKey(serial, uid: uid) else { return false }
        do {
            try serial.update(keys)
            return true
        } catch {
            return false
        }
    }

    /// Whether `serial` still names the key parked for `uid`: root-owned, of type `user`,
    /// with the parking permissions and description (an invalidated key's number may
    /// since have been given to another key).
    private func isParkedKey(_ serial: KeySerial, uid: UInt32) -> Bool {
        guard let info = try? serial.describe() else { return false }
        return info.type == "user" && info.uid == 0 && info.permissions == Self.permissions.rawValue
            && info.description == keyDescription(uid)
    }

    /// Every parked uid with its keys.
    func restore() -> [(uid: UInt32, keys: SecretBytes)] {
        guard let ring = ring(create: false), let links = try? ring.links() else { return [] }
        var restored: [(UInt32, SecretBytes)] = []
        let prefix = ringDescription + ":"
        for key in links {
            guard let info = try? key.describe(), info.type == "user", info.description.hasPrefix(prefix),
                let uid = UInt32(info.description.dropFirst(prefix.count)),
                let keys = try? key.read()
            else { continue }
            restored.append((uid, keys))
            parked.set(uid, key)  // the next park after a restart updates it in place too
        }
        return restored
    }
}

/// The serial of the key parked for each uid, shared by the copies of a `KeyParking`.
private final class ParkedSerials: Sendable {
    private let serials = Mutex<[UInt32: KeySerial]>([:])

    func get(_ uid: UInt32) -> KeySerial? { serials.withLock { $0[uid] } }

    func set(_ uid: UInt32, _ serial: KeySerial?) { serials.withLock { $0[uid] = serial } }

    /// Held while the ring is created, linked into or dropped (parks of different uids run
    /// on different threads); an in-place update of a parked key needs no ring change.
    private let ringChanges = Mutex<Void>(())

    func changingRing(_ body: () -> Void) { ringChanges.withLock { _ in body() } }
}
