import Testing

@testable import ArcaSyncAgent

/// The mesh reconciliation's plan (``SyncMesh/plan(_:)``) from exact circles, cards and
/// Syncthing configurations, and the card format.
struct SyncMeshTests {
    // Arca ids (hex) of A (this device), B, C, D; their Syncthing ids.
    static let a = String(repeating: "a1", count: 32)
    static let b = String(repeating: "b2", count: 32)
    static let c = String(repeating: "c3", count: 32)
    static let d = String(repeating: "d4", count: 32)
    static func st(_ letter: Character) -> String {
        (0..<8).map { _ in String(repeating: letter, count: 7) }.joined(separator: "-")
    }
    static let stA = st("A"), stB = st("B"), stC = st("C"), stD = st("D"), stX = st("X")
    static let cardB = SyncMesh.Card(syncthing: stB, addresses: ["tcp://127.0.0.1:22001"])
    static let cardC = SyncMesh.Card(syncthing: stC, addresses: ["tcp://127.0.0.1:22002"])
    static let cardD = SyncMesh.Card(syncthing: stD, addresses: ["dynamic"])

    static func state(
        members: [(String, Bool)], cards: [String: SyncMesh.Card], configured: [String: String],
        shared: [String], other: Set<String> = []
    ) -> SyncMesh.State {
        SyncMesh.State(
            device: a, syncthing: stA, members: members.map { SyncMesh.Member(device: $0.0, removed: $0.1) },
            cards: cards, configured: configured, shared: shared, inOtherFolders: other)
    }

    @Test func aMemberKnowingOnlyItsApproverAddsAndSharesWithEveryOtherMember() {
        // This device knows only B (its approver); C joined through B and published its card.
        let state = Self.state(
            members: [(Self.a, false), (Self.b, false), (Self.c, false)],
            cards: [Self.b: Self.cardB, Self.c: Self.cardC],
            configured: [Self.stA: "me", Self.stB: SyncMesh.deviceName(Self.b)], shared: [Self.stA, Self.stB])
        let plan = SyncMesh.plan(state)
        #expect(plan.add == [SyncMesh.Peer(device: Self.c, card: Self.cardC)])
        #expect(plan.folderDevices == [Self.stA, Self.stB, Self.stC])
        #expect(plan.delete == [])
        #expect(SyncMesh.deviceName(Self.c) == "arca c3c3c3c3c3c3c3c3")
    }

    @Test func aMeshAlreadyInPlaceChangesNothing() {
        let state = Self.state(
            members: [(Self.a, false), (Self.b, false), (Self.c, false)],
            cards: [Self.b: Self.cardB, Self.c: Self.cardC],
            configured: [
                Self.stA: "me", Self.stB: SyncMesh.deviceName(Self.b), Self.stC: SyncMesh.deviceName(Self.c),
            ], shared: [Self.stC, Self.stA, Self.stB])
        #expect(SyncMesh.plan(state) == SyncMesh.Plan())
        #expect(SyncMesh.plan(state).isEmpty)
    }

    @Test func aRemovedMemberIsUnsharedAndDeletedUnlessAnotherFolderUsesIt() {
        let members = [(Self.a, false), (Self.b, false), (Self.c, true), (Self.d, true)]
        let configured = [
            Self.stA: "me", Self.stB: SyncMesh.deviceName(Self.b), Self.stC: SyncMesh.deviceName(Self.c),
            Self.stD: SyncMesh.deviceName(Self.d),
        ]
        let cards = [Self.b: Self.cardB, Self.c: Self.cardC, Self.d: Self.cardD]
        let shared = [Self.stA, Self.stB, Self.stC, Self.stD]
        let plan = SyncMesh.plan(Self.state(members: members, cards: cards, configured: configured, shared: shared))
        #expect(plan == SyncMesh.Plan(add: [], folderDevices: [Self.stA, Self.stB], delete: [Self.stC, Self.stD]))
        // D also shares a photo folder here: unshared from arca-sync, kept in the configuration.
        let kept = SyncMesh.plan(
            Self.state(members: members, cards: cards, configured: configured, shared: shared, other: [Self.stD]))
        #expect(kept == SyncMesh.Plan(add: [], folderDevices: [Self.stA, Self.stB], delete: [Self.stC]))
    }

    @Test func aRemovedMemberWithoutACardIsFoundByTheNameJoinOrApproveGaveIt() {
        let plan = SyncMesh.plan(
            Self.state(
                members: [(Self.a, false), (Self.b, false), (Self.c, true)], cards: [Self.b: Self.cardB],
                configured: [Self.stA: "me", Self.stB: "arca b2", Self.stC: SyncMesh.deviceName(Self.c)],
                shared: [Self.stA, Self.stB, Self.stC]))
        #expect(plan == SyncMesh.Plan(add: [], folderDevices: [Self.stA, Self.stB], delete: [Self.stC]))
    }

    @Test func devicesTheCircleDoesNotNameAndTheUsersOwnDevicesAreLeftAlone() {
        // X: a joining device approved here whose approval has not reached the circle yet, or a
        // device the user added by hand (not named by the agent): neither unshared nor deleted.
        let plan = SyncMesh.plan(
            Self.state(
                members: [(Self.a, false), (Self.b, false), (Self.c, true)],
                cards: [Self.b: Self.cardB, Self.c: SyncMesh.Card(syncthing: Self.stC, addresses: ["dynamic"])],
                configured: [Self.stA: "me", Self.stB: "arca b", Self.stC: "laptop", Self.stX: "arca x"],
                shared: [Self.stA, Self.stB, Self.stC, Self.stX]))
        #expect(plan == SyncMesh.Plan(add: [], folderDevices: [Self.stA, Self.stB, Self.stX], delete: []))
    }

    @Test func aRemovedCardNamingAnActiveMembersOrThisDevicesIdRemovesNothing() {
        // C (removed) had published B's and then this device's Syncthing id as its own.
        for forged in [Self.stB, Self.stA] {
            let plan = SyncMesh.plan(
                Self.state(
                    members: [(Self.a, false), (Self.b, false), (Self.c, true)],
                    cards: [Self.b: Self.cardB, Self.c: SyncMesh.Card(syncthing: forged, addresses: ["dynamic"])],
                    configured: [Self.stA: "me", Self.stB: SyncMesh.deviceName(Self.b)], shared: [Self.stA, Self.stB]))
            #expect(plan == SyncMesh.Plan())
        }
    }

    @Test func whileAJoinWaitsNothingChanges() {
        let plan = SyncMesh.plan(
            Self.state(
                members: [], cards: [:], configured: [Self.stA: "me", Self.stB: "arca b"], shared: [Self.stA, Self.stB])
        )
        #expect(plan == SyncMesh.Plan())
    }

    @Test func cardsRoundTripAndBadOnesAreRejected() {
        #expect(SyncMesh.Card(parsing: Self.cardB.bytes) == Self.cardB)
        #expect(String(decoding: Self.cardB.bytes, as: UTF8.self) == Self.stB + "\ntcp://127.0.0.1:22001\n")
        for bad in [
            "", Self.stB, Self.stB + "\n", "nope\ndynamic\n", Self.stB.lowercased() + "\ndynamic\n",
            Self.stB + "\nhttp://x\n", Self.stB + "\ntcp://a b\n", String(Self.stB.dropLast()) + "\ndynamic\n",
        ] {
            #expect(SyncMesh.Card(parsing: Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(SyncMesh.isSyncthingID("A73WAPK-5QAOGTZ-SZO62VI-NDFOBMA-7VIFETD-MFNLHI6-ES53SRP-R7R5HAP"))
    }

    @Test func publishedAddressesAreConcreteListenAddressesElseDynamic() {
        #expect(SyncMesh.publishable(listen: ["tcp://127.0.0.1:22001"]) == ["tcp://127.0.0.1:22001"])
        #expect(SyncMesh.publishable(listen: ["default"]) == ["dynamic"])
        #expect(SyncMesh.publishable(listen: ["tcp://0.0.0.0:22000", "quic://0.0.0.0:22000"]) == ["dynamic"])
        #expect(
            SyncMesh.publishable(listen: ["tcp://[::]:22000", "tcp://192.168.1.4:22000"]) == ["tcp://192.168.1.4:22000"]
        )
    }
}
