import ArcaCrypto
import Foundation
import Testing

@testable import ArcaFleet

@Suite("Fleet host verification: signatures, replays, rollbacks, expiry")
struct HostVerifierTests {
    let fleet: Fleet
    init() throws { fleet = try Fleet() }

    @Test("a signed manifest, item and group key verify and decrypt to the secret")
    func applies() throws {
        let manifest = try fleet.verifier.manifest(
            try fleet.manifest(seq: 5, entries: [.init(id: "00ff", version: 2)]), state: HostState(), now: fleet.now)
        let plan = fleet.verifier.plan(
            manifest, items: ["00ff": try fleet.item(2, secret: "pw-2")],
            groupKeys: ["web/1": try fleet.groupKeyRecord()],
            state: HostState())
        #expect(plan.errors == [])
        #expect(plan.apply.count == 1)
        #expect(plan.apply.first?.secret.text == "pw-2")
        #expect(plan.apply.first?.applied.units == ["app.service:pw"])
    }

    @Test("a manifest signed by another key is rejected")
    func forgedManifest() throws {
        let other = try SecretBytes.random(count: 32)
        #expect(throws: FleetError.verification("manifest: bad signature")) {
            try fleet.verifier.manifest(
                try fleet.manifest(seq: 9, entries: [], seed: other), state: HostState(),
                now: fleet.now)
        }
    }

    @Test("a manifest whose body was edited (signature kept) is rejected")
    func alteredManifest() throws {
        let genuine = try fleet.manifest(seq: 5, entries: [.init(id: "00ff", version: 2)])
        let altered = try alterBody(genuine) { $0 = $0.replacingOccurrences(of: "\"seq\":5", with: "\"seq\":6") }
        #expect(altered != genuine)
        #expect(throws: FleetError.verification("manifest: bad signature")) {
            try fleet.verifier.manifest(altered, state: HostState(), now: fleet.now)
        }
    }

    @Test("an older manifest is a replay; the same seq is accepted (idempotent re-read)")
    func replayedManifest() throws {
        var state = HostState()
        state.seq = 7
        #expect(throws: FleetError.verification("manifest seq 6 is older than the applied 7 (replay)")) {
            try fleet.verifier.manifest(try fleet.manifest(seq: 6, entries: []), state: state, now: fleet.now)
        }
        #expect(
            try fleet.verifier.manifest(try fleet.manifest(seq: 7, entries: []), state: state, now: fleet.now).seq == 7)
    }

    @Test("an expired manifest and another host's manifest are rejected")
    func expiredOrForeign() throws {
        #expect(throws: FleetError.verification("manifest seq 3 has expired")) {
            try fleet.verifier.manifest(
                try fleet.manifest(seq: 3, entries: [], notAfter: fleet.now), state: HostState(),
                now: fleet.now)
        }
        #expect(throws: FleetError.verification("manifest is for host h2")) {
            try fleet.verifier.manifest(
                try fleet.manifest(seq: 3, entries: [], host: "h2"), state: HostState(),
                now: fleet.now)
        }
    }

    @Test("an item record signed as another kind does not verify as an item")
    func kindConfusion() throws {
        let manifestBytes = try fleet.manifest(seq: 3, entries: [])
        let record = try SignedRecord.decode(manifestBytes, what: "x")
        #expect(throws: FleetError.verification("x: a manifest record, not item")) {
            try record.verified(as: ItemRecord.self, kind: .item, publicKey: fleet.admin.publicKey, what: "x")
        }
        // Relabelling the kind breaks the signature, which covers it.
        var relabelled = record
        relabelled.kind = .item
        #expect(throws: FleetError.verification("x: bad signature")) {
            try relabelled.verified(as: ItemRecord.self, kind: .item, publicKey: fleet.admin.publicKey, what: "x")
        }
    }

    @Test("a lower version than the applied one is refused (rollback), and the applied item is kept")
    func rollback() throws {
        var state = HostState()
        state.items["00ff"] = AppliedItem(
            id: "00ff", version: 3, service: "db", account: "app", users: [], groups: [],
            units: [])
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "00ff", version: 2)])
        let plan = fleet.verifier.plan(
            manifest, items: ["00ff": try fleet.item(2, secret: "old")],
            groupKeys: ["web/1": try fleet.groupKeyRecord()],
            state: state)
        #expect(plan.apply.isEmpty)
        #expect(plan.remove.isEmpty)
        #expect(plan.errors == ["rejected: item 00ff v2: older than the applied v3 (rollback refused)"])
    }

    @Test("a genuine older item record under the current version's key is refused")
    func replayedItem() throws {
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "00ff", version: 3)])
        let plan = fleet.verifier.plan(
            manifest, items: ["00ff": try fleet.item(2, secret: "old")],
            groupKeys: ["web/1": try fleet.groupKeyRecord()],
            state: HostState())
        #expect(plan.apply.isEmpty)
        #expect(plan.errors == ["rejected: item 00ff v3: the record is item 00ff v2"])
    }

    @Test("an item with edited grants (signature kept) is refused")
    func alteredItem() throws {
        let altered = try alterBody(try fleet.item(2, secret: "pw")) {
            $0 = $0.replacingOccurrences(of: "\"users\":[\"postgres\"]", with: "\"users\":[\"postgres\",\"mallory\"]")
        }
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "00ff", version: 2)])
        let plan = fleet.verifier.plan(
            manifest, items: ["00ff": altered],
            groupKeys: ["web/1": try fleet.groupKeyRecord()], state: HostState())
        #expect(plan.apply.isEmpty)
        #expect(plan.errors == ["rejected: item 00ff v2: bad signature"])
    }

    @Test("a group key sealed to another host does not open, and one naming another host is refused")
    func foreignGroupKey() throws {
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "00ff", version: 2)])
        let item = try fleet.item(2, secret: "pw")
        let sealedToOther = try fleet.verifier.plan(
            manifest, items: ["00ff": item], groupKeys: ["web/1": try fleet.groupKeyRecord(for: fleet.otherHost)],
            state: HostState())
        #expect(sealedToOther.errors == ["rejected: sealed key does not open with this host's key"])
        let namesOther = fleet.verifier.plan(
            manifest, items: ["00ff": item], groupKeys: ["web/1": try fleet.groupKeyRecord(host: "h2")],
            state: HostState())
        #expect(namesOther.errors == ["rejected: group key web/1: sealed for web/1/h2"])
    }

    @Test("an item whose ciphertext was swapped with another version's fails to decrypt")
    func swappedCiphertext() throws {
        // Sign a record carrying v1's ciphertext under v2's id/version: only an admin could,
        // and the context binding still refuses it.
        let v1 = try SignedRecord.decode(try fleet.item(1, secret: "one"), what: "")
        var record = try JSONDecoder().decode(ItemRecord.self, from: v1.body)
        record.version = 2
        let signed = try SignedRecord.sign(record, kind: .item, seed: fleet.admin.seed).encoded()
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "00ff", version: 2)])
        let plan = fleet.verifier.plan(
            manifest, items: ["00ff": signed],
            groupKeys: ["web/1": try fleet.groupKeyRecord()], state: HostState())
        #expect(plan.errors == ["rejected: item 00ff v2: does not decrypt with group web"])
    }

    @Test("items that left the manifest are removed; applied items at the listed version are not re-read")
    func removals() throws {
        var state = HostState()
        for id in ["aa", "bb"] {
            state.items[id] = AppliedItem(
                id: id, version: 1, service: id, account: "x", users: [], groups: [],
                units: [])
        }
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "bb", version: 1)])
        #expect(fleet.verifier.wanted(manifest, state: state) == [])
        let plan = fleet.verifier.plan(manifest, items: [:], groupKeys: [:], state: state)
        #expect(plan.remove.map(\.id) == ["aa"])
        #expect(plan.errors == [])
    }

    @Test("a listed item missing from etcd is reported and nothing is removed")
    func missingItem() throws {
        let manifest = Manifest(host: "h1", seq: 9, notAfter: fleet.now + 10, entries: [.init(id: "cc", version: 1)])
        let plan = fleet.verifier.plan(manifest, items: [:], groupKeys: [:], state: HostState())
        #expect(plan.errors == ["not found: item cc v1"])
    }
}
