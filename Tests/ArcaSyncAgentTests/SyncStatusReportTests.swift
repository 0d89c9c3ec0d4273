import ArcaProtocol
import Foundation
import Testing

@testable import ArcaSyncAgent

/// `arca sync status --json`: parsed back, every field and value exactly.
struct SyncStatusReportTests {
    static let me = [UInt8](repeating: 0xa1, count: 32)
    static let peer = [UInt8](repeating: 0xb2, count: 32)
    static let gone = [UInt8](repeating: 0xc3, count: 32)
    static let address = DeviceAddress(
        arca: String(repeating: "a1", count: 32),
        syncthing: "A73WAPK-5QAOGTZ-SZO62VI-NDFOBMA-7VIFETD-MFNLHI6-ES53SRP-R7R5HAP")

    func parse(_ text: String) throws -> [String: Any] {
        #expect(text.hasSuffix("}\n"))
        #expect(text.filter { $0 == "\n" }.count == 1)
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aMemberWithAPeerARemovedDeviceAndReports() throws {
        let status = SyncStatus(
            device: Self.me, awaitingApprovalFrom: nil, epoch: 2, seq: 7,
            devices: [
                SyncDeviceStatus(id: Self.me, removedAfter: nil, applied: 7, missing: 0),
                SyncDeviceStatus(id: Self.peer, removedAfter: nil, applied: 4, missing: 3),
                SyncDeviceStatus(id: Self.gone, removedAfter: 9, applied: 9, missing: 0),
            ], queued: 5, conflicts: 1, reports: ["forged or altered record", "rolled back head"])
        let json = try parse(SyncStatusReport.json(status, address: Self.address, folder: "/home/u/sync"))
        #expect(
            Set(json.keys)
                == ["device", "address", "folder", "epoch", "seq", "devices", "queued", "conflicts", "reports"])
        #expect(json["device"] as? String == String(repeating: "a1", count: 32))
        #expect(json["address"] as? String == Self.address.description)
        #expect(json["folder"] as? String == "/home/u/sync")
        #expect(json["epoch"] as? Int == 2)
        #expect(json["seq"] as? Int == 7)
        #expect(json["queued"] as? Int == 5)
        #expect(json["conflicts"] as? Int == 1)
        #expect(json["reports"] as? [String] == ["forged or altered record", "rolled back head"])
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.count == 3)
        #expect(devices.map { $0["id"] as? String } == ["a1", "b2", "c3"].map { String(repeating: $0, count: 32) })
        #expect(devices.map { $0["active"] as? Bool } == [true, true, false])
        #expect(devices.map { $0["applied"] as? Int } == [7, 4, 9])
        #expect(devices.map { $0["missing"] as? Int } == [0, 3, 0])
        #expect(devices.map { $0["removedAfter"] as? Int } == [nil, nil, 9])
        #expect(Set(devices[0].keys) == ["id", "active", "applied", "missing"])
        #expect(Set(devices[2].keys) == ["id", "active", "removedAfter", "applied", "missing"])
    }

    @Test func aJoinWaitingForItsApproval() throws {
        let status = SyncStatus(
            device: Self.me, awaitingApprovalFrom: Self.peer, epoch: 0, seq: 0, devices: [], queued: 0, conflicts: 0,
            reports: [])
        let json = try parse(SyncStatusReport.json(status, address: Self.address, folder: "/s"))
        #expect(json["awaitingApprovalFrom"] as? String == String(repeating: "b2", count: 32))
        #expect((json["devices"] as? [Any])?.count == 0)
        #expect(json["epoch"] as? Int == 0)
        #expect((json["reports"] as? [Any])?.count == 0)
    }

    /// 2026-11-01T10:00:00Z and 2026-12-02T00:31:05Z.
    static let october: UInt64 = 1_793_527_200_000
    static let december: UInt64 = 1_796_171_465_000

    static let detailed = SyncStatus(
        device: me, awaitingApprovalFrom: nil, epoch: 1, seq: 3,
        devices: [
            SyncDeviceStatus(id: me, removedAfter: nil, applied: 3, missing: 0),
            SyncDeviceStatus(id: peer, removedAfter: nil, applied: 2, missing: 0),
            SyncDeviceStatus(id: gone, removedAfter: 4, applied: 4, missing: 0),
        ], queued: 7, conflicts: 0, reports: [],
        detail: SyncStatusDetail(
            devices: [
                SyncDeviceActivity(headMillis: december, dormant: false),
                SyncDeviceActivity(headMillis: october, dormant: true),
                SyncDeviceActivity(headMillis: 0, dormant: false),
            ], expired: 12, waiting: 5))

    @Test func dormantDevicesShowSinceWhenInTextAndJSON() throws {
        #expect(SyncStatusReport.utc(Self.october) == "2026-11-01T10:00:00Z")
        #expect(SyncStatusReport.utc(Self.december) == "2026-12-02T00:31:05Z")
        #expect(SyncStatusReport.utc(0) == "1970-01-01T00:00:00Z")
        #expect(SyncStatusReport.utc(951_782_400_000) == "2000-02-29T00:00:00Z")
        let text = SyncStatusReport.text(Self.detailed, address: Self.address, folder: "/s")
        let a1 = String(repeating: "a1", count: 32)
        let b2 = String(repeating: "b2", count: 32)
        let c3 = String(repeating: "c3", count: 32)
        #expect(
            text.split(separator: "\n").filter { $0.hasPrefix("device ") || $0.hasPrefix("queued") }
                == [
                    "device \(a1) (this device): active, applied 3, missing 0, last head 2026-12-02T00:31:05Z",
                    "device \(b2): dormant since 2026-11-01T10:00:00Z, applied 2, missing 0",
                    "device \(c3): removed after 4, applied 4, missing 0",
                    "queued: 7 (5 waiting for a circle update, 12 expired)",
                ])
        let json = try parse(SyncStatusReport.json(Self.detailed, address: Self.address, folder: "/s"))
        #expect(json["waiting"] as? Int == 5)
        #expect(json["expired"] as? Int == 12)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["state"] as? String } == ["active", "dormant", "removed"])
        #expect(devices.map { $0["lastHead"] as? String } == ["2026-12-02T00:31:05Z", "2026-11-01T10:00:00Z", nil])
        #expect(devices.map { $0["dormantSince"] as? String } == [nil, "2026-11-01T10:00:00Z", nil])
        #expect(Set(devices[1].keys) == ["id", "active", "applied", "missing", "state", "lastHead", "dormantSince"])
    }

    @Test func anOlderArcadsReplyWithoutDetailKeepsTheOldForm() throws {
        var old = Self.detailed
        old.detail = nil
        let text = SyncStatusReport.text(old, address: Self.address, folder: "/s")
        #expect(text.contains("device \(String(repeating: "b2", count: 32)): active, applied 2, missing 0\n"))
        #expect(text.contains("queued: 7\n"))
        let json = try parse(SyncStatusReport.json(old, address: Self.address, folder: "/s"))
        #expect(json["waiting"] == nil)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(Set(devices[1].keys) == ["id", "active", "applied", "missing"])
    }
}
