import ArcaProtocol
import ArcaSync
import FoundationEssentials

/// `arca sync status`: arcad's view of the circle with this device's address and folder, as
/// text or JSON.
enum SyncStatusReport {
    static func text(_ status: SyncStatus, address: DeviceAddress, folder: String) -> String {
        var lines = ["this device: \(address)", "folder: \(folder)", "epoch: \(status.epoch)", "seq: \(status.seq)"]
        if let approver = status.awaitingApprovalFrom {
            lines.append("waiting for approval from \(Hex.encode(approver))")
        }
        for device in status.devices {
            let state = device.removedAfter.map { "removed after \($0)" } ?? "active"
            let me = device.id == status.device ? " (this device)" : ""
            lines.append(
                "device \(Hex.encode(device.id))\(me): \(state), applied \(device.applied), missing \(device.missing)")
        }
        lines.append("queued: \(status.queued)")
        lines.append("conflicts: \(status.conflicts)")
        for report in status.reports { lines.append("report: \(report)") }
        return lines.joined(separator: "\n") + "\n"
    }

    struct JSON: Encodable {
        struct Device: Encodable {
            var id: String
            var active: Bool
            var removedAfter: UInt64?
            var applied: UInt64
            var missing: UInt64
        }
        var device: String
        var address: String
        var folder: String
        var awaitingApprovalFrom: String?
        var epoch: UInt32
        var seq: UInt64
        var devices: [Device]
        var queued: UInt32
        var conflicts: UInt32
        var reports: [String]
    }

    static func json(_ status: SyncStatus, address: DeviceAddress, folder: String) -> String {
        let value = JSON(
            device: Hex.encode(status.device), address: address.description, folder: folder,
            awaitingApprovalFrom: status.awaitingApprovalFrom.map(Hex.encode), epoch: status.epoch, seq: status.seq,
            devices: status.devices.map {
                .init(
                    id: Hex.encode($0.id), active: $0.removedAfter == nil, removedAfter: $0.removedAfter,
                    applied: $0.applied, missing: $0.missing)
            }, queued: status.queued, conflicts: status.conflicts, reports: status.reports)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and numbers only: encoding cannot fail.
        let bytes = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
        return String(decoding: bytes, as: UTF8.self) + "\n"
    }
}
