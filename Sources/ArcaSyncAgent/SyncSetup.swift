import ArcaClient
import ArcaProtocol
import ArcaSync

#if canImport(Glibc)
    import Glibc
#endif

/// What every verb needs, resolved from the common options and the environment: the user's
/// Syncthing (REST endpoint from its config.xml), the synced folder's path, and arcad's socket.
struct SyncSetup {
    let syncthing: SyncthingClient
    let folderOption: String?
    let home: String
    let socket: String
    let uid: UInt32

    init(_ options: SyncOptions) throws(SyncAgentError) {
        home = Self.environment("HOME") ?? "/"
        let homes =
            options.values["syncthing-home"].map { [$0] }
            ?? SyncthingEndpoint.defaultHomes(
                home: home, xdgStateHome: Self.environment("XDG_STATE_HOME"),
                xdgConfigHome: Self.environment("XDG_CONFIG_HOME"))
        guard let text = homes.lazy.compactMap({ FolderIO.read($0 + "/config.xml", limit: 4 << 20) }).first else {
            throw .syncthing(
                "no config.xml in \(homes.joined(separator: " or ")) (is Syncthing set up? see --syncthing-home)")
        }
        syncthing = SyncthingClient(
            endpoint: try SyncthingEndpoint.parse(configXML: String(decoding: text, as: UTF8.self)))
        folderOption = options.values["folder"]
        socket = options.values["socket"] ?? ArcadClient.environmentSocketPath
        uid = getuid()
    }

    static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// The synced folder: `--folder`, else the path Syncthing has for folder arca-sync, else the default.
    func folderPath() throws(SyncAgentError) -> String {
        if let folderOption { return folderOption }
        if let path = try syncthing.folderPath(SyncCLI.folderID) { return path }
        return home + "/.local/share/arca/sync"
    }

    /// A connection to arcad for the sync requests.
    func link(timeoutMilliseconds: Int = 10_000) throws(SyncAgentError) -> ArcadSyncLink {
        try ArcadSyncLink(socket: socket, uid: uid, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// This device's id, or the error that says to set sync up first.
    func ownDevice(_ link: ArcadSyncLink) throws(SyncAgentError) -> [UInt8] {
        guard let id = try link.deviceID() else {
            throw .arcad("sync is not set up for this user here: `arca sync init` (first machine) or `arca sync join`")
        }
        return id
    }

    /// Shares the folder with `peers` (and this instance), creating it where missing.
    func share(with peers: [String]) throws(SyncAgentError) -> String {
        let path = try folderPath()
        try SyncFolder(root: path).create()
        let me = try syncthing.deviceID()
        try syncthing.shareFolder(SyncCLI.folderID, path: path, with: [me] + peers)
        return path
    }

    static func deviceID(_ hex: String) throws(SyncAgentError) -> DeviceID {
        guard let bytes = Hex.decode(hex), let id = try? DeviceID(bytes) else { throw .usage("bad device id \(hex)") }
        return id
    }
}
