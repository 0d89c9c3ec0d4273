import Synchronization

/// A `KeyringLayout`'s hold on the user keyrings it publishes into, so that only
/// the first ring published for a uid needs the uid-switch child.
///
/// Root may write a user's `@u` only as its possessor (the owner is the user, and
/// other users get nothing). The child, which runs with the user's real uid and so
/// possesses `@u` through `KEY_SPEC_USER_KEYRING`, links `@u` into the anchor, a
/// root-owned keyring "arca:anchor". A thread that publishes links the anchor into
/// its own *thread* keyring (which neither other threads nor children see) for the
/// length of one publication, and so possesses every anchored `@u` just long enough
/// for one `keyctl_link`; then it unlinks it. Possession that lasted would make
/// every possession check of the process (each line of `/proc/keys` it reads) walk
/// every anchored `@u`.
///
/// What keeps the anchor alive in between is the holder, "arca:anchor-holder",
/// linked into the keyring the layout was given: arcad's own private session
/// keyring (`DaemonProcess.isolateKeyrings`), which all its threads share. The
/// holder grants no search, to its possessors or to root, so nothing reaches the
/// anchor through it: not arcad's threads, not the uid-switch child (which inherits
/// the session keyring). (A process with fsuid 0 that knows the anchor's serial may
/// link it, as owner; such a process can already read every item key arcad makes,
/// all owned by root.) If the anchor dies anyway (its
/// holder was displaced or destroyed), the next publisher makes a new pair and each
/// uid goes through the child once more.
///
/// A serial is only a number: the user may invalidate or revoke their `@u` (they
/// own it), the kernel's garbage collector then drops it from the anchor and frees
/// it, and a later key may get the same serial. So a link through a remembered
/// serial first checks that the serial names that uid's user keyring (a keyring
/// it owns, named `_uid.<uid>`: the user's to read whatever happens to it), the
/// anchor's serial is checked the same way, and any failure (no such key, a
/// `keyctl setperm` that took away the possessor's write, anything) sends the
/// caller back to the child, which finds the live `@u` and anchors it again.
final class UserKeyringAnchor: Sendable {
    /// The anchor's description.
    static let description = "arca:anchor"
    /// The holder's description.
    static let holderDescription = "arca:anchor-holder"
    /// Possessor everything; owner (root) view, write (the child, whose fsuid is 0,
    /// links `@u` into it) and link (a thread links it into its thread keyring
    /// without possessing it); nobody else anything.
    static let permissions: KeyPermissions = [.possessorAll, .userView, .userWrite, .userLink]
    /// Owner (root) view, read and write only: no search for anyone, so possessing
    /// the holder gives nothing inside it.
    static let holderPermissions: KeyPermissions = [.userView, .userRead, .userWrite]

    /// Where the holder is linked.
    let place: KeySerial
    private let anchor = Mutex<KeySerial?>(nil)

    /// An anchor whose holder goes into `place` (made on first use).
    init(holderIn place: KeySerial) { self.place = place }

    /// Links the anchor into the calling thread's keyring and returns it (made on
    /// first use, and again if it died); `release(possession:)` unlinks it. The lock
    /// is held only to read the serial, or to make a new anchor: no system call on
    /// the common path runs under a lock that all uids share.
    func possess() throws(KeyringError) -> KeySerial {
        if let existing = anchor.withLock({ $0 }), try linked(existing) { return existing }
        return try anchor.withLock { (anchor: inout KeySerial?) throws(KeyringError) -> KeySerial in
            if let existing = anchor, try linked(existing) { return existing }
            let made = try makeAnchor()
            anchor = made
            return made
        }
    }

    /// Links `existing` into the thread keyring if it is still this layout's anchor:
    /// true when it is linked; false when it is dead (a new one must be made). The
    /// serial may have been reused since the anchor died: whatever it names now is
    /// linked only if it is a root-owned "arca:anchor" with the anchor's permissions,
    /// and unlinked again otherwise. Any other failure (a full quota) is thrown: the
    /// anchor, and every uid's hold in it, stays for the next publication.
    private func linked(_ existing: KeySerial) throws(KeyringError) -> Bool {
        do throws(KeyringErrno) {
            try existing.link(into: .threadKeyring)
        } catch {
            switch error {
            case .noKey, .keyRevoked, .keyExpired: return false
            default: throw KeyringError.from(error, operation: "keyctl_link(anchor)")
            }
        }
        guard Self.isKeyring(existing, owner: 0, named: Self.description, permissions: Self.permissions) else {
            try? existing.unlink(from: .threadKeyring)
            return false
        }
        return true
    }

    /// Whether `key` is, right now, a keyring owned by `owner` named `description`
    /// (with `permissions`, when given): what a remembered serial must still name.
    static func isKeyring(
        _ key: KeySerial, owner: UInt32, named description: String, permissions: KeyPermissions? = nil
    ) -> Bool {
        guard let described = try? key.describe() else { return false }
        return described.type == "keyring" && described.uid == owner && described.description == description
            && permissions.map { $0.rawValue == described.permissions } ?? true
    }

    /// Ends what `possess` began.
    func release(possession anchor: KeySerial) {
        try? anchor.unlink(from: .threadKeyring)
    }

    /// A new holder in `place` (displacing an older one) with a new anchor in it,
    /// the anchor also linked into the thread keyring.
    private func makeAnchor() throws(KeyringError) -> KeySerial {
        let holder = try mapped("add_key(anchor holder)") { () throws(KeyringErrno) in
            try KeySerial.add(type: "keyring", description: Self.holderDescription, payload: nil, to: place)
        }
        do throws(KeyringErrno) {
            let made = try KeySerial.add(type: "keyring", description: Self.description, payload: nil, to: holder)
            do throws(KeyringErrno) {
                try made.setPermissions(Self.permissions)
                try made.link(into: .threadKeyring)
                try holder.setPermissions(Self.holderPermissions)
            } catch {
                try? made.invalidate()
                throw error
            }
            return made
        } catch {
            try? holder.invalidate()
            throw KeyringError.from(error, operation: "anchor")
        }
    }

    /// Links `ring` into `home`, the `@u` of `uid` anchored earlier, if `home` is
    /// still a keyring owned by `uid` named as a user keyring; false when it is not or
    /// the link fails (the caller then goes through the child). The caller possesses
    /// the anchor.
    static func link(_ ring: KeySerial, into home: KeySerial, owner uid: UInt32) -> Bool {
        guard isKeyring(home, owner: uid, named: "_uid.\(uid)") else { return false }
        do throws(KeyringErrno) {
            try ring.link(into: home)
            return true
        } catch {
            return false
        }
    }

    /// Lets go of `home` (a user's `@u`, when the account is purged).
    func forget(_ home: KeySerial) {
        guard let anchor = anchor.withLock({ $0 }) else { return }
        try? home.unlink(from: anchor)
    }
}
