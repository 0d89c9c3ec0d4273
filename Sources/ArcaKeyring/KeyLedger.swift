import Synchronization

/// The serials of every ring and key a `KeyringLayout` made, per uid: arcad owns
/// them, so it destroys them by serial, never by looking them up through a
/// keyring the user controls. Each uid has its own lock; nothing is held across
/// uids, so a user who stalls work on their own keyrings (by stopping the
/// uid-switch child) stalls only themselves.
final class KeyLedger: Sendable {
    /// One ring arcad made and the item keys it put in it.
    struct Ring: Sendable {
        var ring: KeySerial
        /// Item keys by description, with what each costs.
        var keys: [String: (serial: KeySerial, cost: KeyCost)] = [:]
        /// The ring itself and its keys, as charged to root.
        var cost: KeyCost

        var serials: [KeySerial] { [ring] + keys.values.map(\.serial) }
    }

    /// Everything arcad made for one uid.
    struct User: Sendable {
        var rings: [KeyringClass: Ring] = [:]
        /// The uid's `arca:svc` ring, for system items granted to it.
        var service: Ring?
        /// Keys a removal could not destroy, tried again by the next one.
        var leftovers: [KeySerial] = []
        /// Classes for which `/proc/keys` was searched once for rings made before this
        /// ledger (an earlier arcad): from then on the ledger knows all of them.
        var scanned: Set<KeyringClass> = []
        /// The uid's `@u`, once the uid-switch child has linked it into this process's
        /// anchor (`UserKeyringAnchor`): rings are linked into it without a child.
        var userKeyring: KeySerial?
        /// How many times a ring was published through the child (the tests count them).
        var childPublications = 0
        /// What the uid's class rings cost, for its budget (service grants are the
        /// administrator's and not counted).
        func cost(excluding excluded: KeyringClass? = nil) -> KeyCost {
            rings.reduce(KeyCost()) { $1.key == excluded ? $0 : $0 + $1.value.cost }
        }
    }

    private final class Slot: Sendable {
        let user = Mutex(User())
    }

    private let slots = Mutex<[UInt32: Slot]>([:])

    init() {}

    /// Runs `body` on `uid`'s record under that uid's lock only.
    func withUser<R: Sendable, E: Error>(_ uid: UInt32, _ body: (inout User) throws(E) -> R) throws(E) -> R {
        let slot = slots.withLock { slots in
            if let existing = slots[uid] { return existing }
            let made = Slot()
            slots[uid] = made
            return made
        }
        return try slot.user.withLock { (user: inout User) throws(E) -> R in try body(&user) }
    }
}
