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
        for (index, device) in status.devices.enumerated() {
            let activity = activity(status, index)
            var state = device.removedAfter.map { "removed after \($0)" } ?? "active"
            if device.removedAfter == nil, let activity, activity.dormant {
                state = "dormant since \(Self.utc(activity.headMillis))"
            }
            let me = device.id == status.device ? " (this device)" : ""
            var line =
                "device \(Hex.encode(device.id))\(me): \(state), applied \(device.applied), missing \(device.missing)"
            if let activity, activity.headMillis > 0, !activity.dormant {
                line += ", last head \(Self.utc(activity.headMillis))"
            }
            lines.append(line)
        }
        if let detail = status.detail {
            lines.append(
                "queued: \(status.queued) (\(detail.waiting) waiting for a circle update, \(detail.expired) expired)")
        } else {
            lines.append("queued: \(status.queued)")
        }
        lines.append("conflicts: \(status.conflicts)")
        for report in status.reports { lines.append("report: \(report)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The detail's activity of device `index`, when arcad sent it.
    static func activity(_ status: SyncStatus, _ index: Int) -> SyncDeviceActivity? {
        guard let devices = status.detail?.devices, devices.indices.contains(index) else { return nil }
        return devices[index]
    }

    /// `2026-12-02T00:31:05Z` for Unix milliseconds (UTC, whole seconds).
    static func utc(_ millis: UInt64) -> String {
        Date(timeIntervalSince1970: Double(millis / 1000)).formatted(Date.ISO8601FormatStyle())
    }

    struct JSON: Encodable {
        struct Device: Encodable {
            var id: String
            var active: Bool
            var removedAfter: UInt64?
            var applied: UInt64
            var missing: UInt64
            /// "active", "dormant" or "removed" (present when arcad sent its detail).
            var state: String?
            var lastHead: String?
            var dormantSince: String?
        }
        var device: String
        var address: String
        var folder: String
        var awaitingApprovalFrom: String?
        var epoch: UInt32
        var seq: UInt64
        var devices: [Device]
        var queued: UInt32
        var waiting: UInt32?
        var expired: UInt32?
        var conflicts: UInt32
        var reports: [String]
    }

    static func json(_ status: SyncStatus, address: DeviceAddress, folder: String) -> String {
        let value = JSON(
            device: Hex.encode(status.device), address: address.description, folder: folder,
            awaitingApprovalFrom: status.awaitingApprovalFrom.map(Hex.encode), epoch: status.epoch, seq: status.seq,
            devices: status.devices.enumerated().map { index, device in
                let activity = activity(status, index)
                let dormant = activity?.dormant == true && device.removedAfter == nil
                let known = activity.flatMap { $0.headMillis > 0 ? utc($0.headMillis) : nil }
                return .init(
                    id: Hex.encode(device.id), active: device.removedAfter == nil, removedAfter: device.removedAfter,
                    applied: device.applied, missing: device.missing,
                    state: activity.map { _ in
                        device.removedAfter != nil ? "removed" : dormant ? "dormant" : "active"
                    },
                    lastHead: known, dormantSince: dormant ? known : nil)
            }, queued: status.queued, waiting: status.detail?.waiting, expired: status.detail?.expired,
            conflicts: status.conflicts, reports: status.reports)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Strings and numbers only: encoding cannot fail.
        let bytes = (try? encoder.encode(value)).map(Array.init) ?? Array("{}".utf8)
        return String(decoding: bytes, as: UTF8.self) + "\n"
    }
}
