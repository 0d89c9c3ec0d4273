/// The REST calls of the mesh reconciliation (``SyncMesh``): the configured devices, every
/// folder's devices, the listen addresses, setting a folder's devices and deleting a device.
extension SyncthingClient {
    /// The configured devices: id → name (GET /rest/config/devices).
    public func devices() throws(SyncAgentError) -> [String: String] {
        struct Device: Decodable {
            var deviceID: String
            var name: String?
        }
        let list = try decode([Device].self, try call("GET", "/rest/config/devices"))
        return Dictionary(list.map { ($0.deviceID, $0.name ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    /// Every folder's id and device ids (GET /rest/config/folders).
    public func folders() throws(SyncAgentError) -> [String: [String]] {
        struct Folder: Decodable {
            struct Member: Decodable { var deviceID: String }
            var id: String
            var devices: [Member]
        }
        let list = try decode([Folder].self, try call("GET", "/rest/config/folders"))
        return Dictionary(list.map { ($0.id, $0.devices.map(\.deviceID)) }, uniquingKeysWith: { a, _ in a })
    }

    /// The listen addresses (GET /rest/config/options, `listenAddresses`).
    public func listenAddresses() throws(SyncAgentError) -> [String] {
        struct Options: Decodable { var listenAddresses: [String] }
        return try decode(Options.self, try call("GET", "/rest/config/options")).listenAddresses
    }

    /// Sets exactly the devices `folder` is shared with (PATCH /rest/config/folders/ID).
    public func setFolderDevices(_ folder: String, _ devices: [String]) throws(SyncAgentError) {
        struct Member: Encodable { var deviceID: String }
        struct Patch: Encodable { var devices: [Member] }
        _ = try call(
            "PATCH", "/rest/config/folders/\(folder)",
            body: encode(Patch(devices: devices.map { Member(deviceID: $0) })))
    }

    /// Deletes a device from the configuration (DELETE /rest/config/devices/ID).
    public func deleteDevice(_ device: String) throws(SyncAgentError) {
        _ = try call("DELETE", "/rest/config/devices/\(device)")
    }
}
