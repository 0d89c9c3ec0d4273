/// The Syncthing mesh of a circle: every member's Syncthing knows every other member's and
/// shares the folder with it, so any two devices exchange directly (before, each device knew
/// only its approver: with the first device off, the others never synced).
///
/// Each agent publishes its own Syncthing device id and addresses as its *card*,
/// `<device-hex>/syncthing` in the synced folder (one writer, like every file there):
///
///     SYNCTHING-ID\n
///     ADDRESS\n          (one line each: tcp://HOST:PORT, or `dynamic`)
///
/// From arcad's circle (which devices are members, which were removed) and the members'
/// cards, ``plan(_:)`` computes what this device's Syncthing must change; ``SyncMeshReconciler``
/// applies it whenever the circle or a card changes. A card is not signed: like every file of
/// the folder it can only come from a member's Syncthing, and it decides only who receives
/// ciphertext (records are sealed and signed; a removed device's later records are refused and
/// the epoch rotates), never who can read it.
public enum SyncMesh {
    /// A member's published Syncthing identity.
    public struct Card: Sendable, Equatable {
        /// The Syncthing device id: 8 dash-separated groups of 7 characters (A–Z, 2–7).
        public var syncthing: String
        /// Where it listens (`tcp://...`), or `["dynamic"]`.
        public var addresses: [String]

        public init(syncthing: String, addresses: [String]) {
            self.syncthing = syncthing
            self.addresses = addresses
        }

        /// The card's file content.
        public var bytes: [UInt8] { Array(([syncthing] + addresses).map { $0 + "\n" }.joined().utf8) }

        /// A card from its file, or nil when it is not one (bad id, no address, a bad line).
        public init?(parsing bytes: [UInt8]) {
            guard bytes.count <= 4096 else { return nil }
            let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
            guard let first = lines.first, SyncMesh.isSyncthingID(first), lines.count >= 2, lines.count <= 17,
                lines.dropFirst().allSatisfy(SyncMesh.isAddress)
            else { return nil }
            syncthing = first
            addresses = Array(lines.dropFirst())
        }
    }

    /// A member as arcad's status lists it: Arca device id (hex) and whether it was removed.
    public struct Member: Sendable, Equatable {
        public var device: String
        public var removed: Bool

        public init(device: String, removed: Bool) {
            self.device = device
            self.removed = removed
        }
    }

    /// What the reconciliation starts from.
    public struct State: Sendable, Equatable {
        /// This device's Arca id (hex) and Syncthing id.
        public var device: String
        public var syncthing: String
        /// The circle (empty while a join waits for its approval: nothing changes then).
        public var members: [Member]
        /// The members' cards found in the folder, by Arca id (hex).
        public var cards: [String: Card]
        /// Syncthing's configured devices: id → name.
        public var configured: [String: String]
        /// The devices the folder is shared with now.
        public var shared: [String]
        /// Devices some other folder of this Syncthing is shared with (never deleted).
        public var inOtherFolders: Set<String>

        public init(
            device: String, syncthing: String, members: [Member], cards: [String: Card],
            configured: [String: String], shared: [String], inOtherFolders: Set<String>
        ) {
            self.device = device
            self.syncthing = syncthing
            self.members = members
            self.cards = cards
            self.configured = configured
            self.shared = shared
            self.inOtherFolders = inOtherFolders
        }
    }

    /// A member's Arca id (hex) and its card.
    public struct Peer: Sendable, Equatable {
        public var device: String
        public var card: Card

        public init(device: String, card: Card) {
            self.device = device
            self.card = card
        }
    }

    /// What to change in this device's Syncthing, in order: add devices, set the folder's
    /// devices, delete devices.
    public struct Plan: Sendable, Equatable {
        /// Members' devices to add (Arca id in hex, and card).
        public var add: [Peer]
        /// The folder's new device list (sorted), or nil to leave it.
        public var folderDevices: [String]?
        /// Devices to delete from the configuration (removed members this agent added).
        public var delete: [String]

        public init(add: [Peer] = [], folderDevices: [String]? = nil, delete: [String] = []) {
            self.add = add
            self.folderDevices = folderDevices
            self.delete = delete
        }

        public var isEmpty: Bool { add.isEmpty && folderDevices == nil && delete.isEmpty }
    }

    /// The name the agent gives a member's device in Syncthing (only these are ever deleted).
    public static func deviceName(_ hex: String) -> String { namePrefix + String(hex.prefix(16)) }
    static let namePrefix = "arca "

    /// Every active member other than this one with a card is added and shared with; the
    /// Syncthing id of every removed member (by its card or its name) is unshared, and deleted when the
    /// agent added it (its name) and no other folder uses it. Devices the circle does not name
    /// (a joining device before its approval reaches here) are left as they are. An id that a
    /// removed member's card shares with an active member's card, or this device's own, stays.
    public static func plan(_ state: State) -> Plan {
        let active = state.members.filter { !$0.removed && $0.device != state.device }
            .compactMap { m in state.cards[m.device].map { Peer(device: m.device, card: $0) } }
            .filter { $0.card.syncthing != state.syncthing }
        let activeIDs = Set(active.map(\.card.syncthing))
        // A removed member's Syncthing: by its card, and by the name the agent gave it (join and
        // approve name the other device so: the remover knows whom it approved without a card).
        let removed = state.members.filter(\.removed)
        let removedNames = Set(removed.map { deviceName($0.device) })
        let removedIDs = Set(removed.compactMap { state.cards[$0.device]?.syncthing })
            .union(state.configured.filter { removedNames.contains($0.value) }.keys)
            .subtracting(activeIDs).subtracting([state.syncthing])
        var plan = Plan()
        var seen: Set<String> = []
        for peer in active.sorted(by: { $0.device < $1.device })
        where state.configured[peer.card.syncthing] == nil && seen.insert(peer.card.syncthing).inserted {
            plan.add.append(peer)
        }
        let current = Set(state.shared)
        let wanted = current.subtracting(removedIDs).union(activeIDs).union([state.syncthing])
        if wanted != current { plan.folderDevices = wanted.sorted() }
        plan.delete = removedIDs.filter {
            state.configured[$0]?.hasPrefix(namePrefix) == true && !state.inOtherFolders.contains($0)
        }.sorted()
        return plan
    }

    /// Whether `id` looks like a Syncthing device id: 8 groups of 7 of A–Z, 2–7, dash-separated.
    public static func isSyncthingID(_ id: String) -> Bool {
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        return groups.count == 8
            && groups.allSatisfy { g in
                g.utf8.count == 7 && g.utf8.allSatisfy { (65...90).contains($0) || (50...55).contains($0) }
            }
    }

    /// Whether `address` is one a card may carry: `dynamic` or tcp/quic URL of printable ASCII.
    static func isAddress(_ address: String) -> Bool {
        guard address == "dynamic" || address.hasPrefix("tcp://") || address.hasPrefix("quic://") else { return false }
        return address.utf8.count <= 256 && address.utf8.allSatisfy { (33...126).contains($0) }
    }

    /// The addresses to publish from Syncthing's listen addresses: concrete ones (a host that
    /// is neither a wildcard nor `default`), else `dynamic` (discovery).
    public static func publishable(listen: [String]) -> [String] {
        let concrete = listen.filter { address in
            guard isAddress(address), address != "dynamic" else { return false }
            let host = address.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "?" }
            return !(host.hasPrefix("0.0.0.0:") || host.hasPrefix("[::]:") || host.hasPrefix(":"))
        }
        return concrete.isEmpty ? ["dynamic"] : concrete
    }
}
