import ArcaCrypto
import ArcaKeyring
import ArcaProtocol

/// arcad's configuration: `/etc/arca/arca.conf`, then command-line flags.
/// The file format and every key are documented in `arca.conf(5)`.
public struct DaemonConfig: Equatable, Sendable {
    /// The request socket.
    public var socketPath = ArcadSocket.defaultPath
    /// The socket systemd's `LoadCredential=ID:PATH` connects to (peer uid 0 only).
    /// Unless set, `credentials.sock` next to the request socket, so that an arcad
    /// started with another `--socket` (a test, a second instance) never takes over
    /// the system's `/run/arca/credentials.sock`.
    public var credentialsSocket: String {
        get {
            if let credentialsSocketSetting { return credentialsSocketSetting }
            guard let slash = socketPath.lastIndex(of: "/") else { return "credentials.sock" }
            return socketPath[...slash] + "credentials.sock"
        }
        set { credentialsSocketSetting = newValue }
    }
    private var credentialsSocketSetting: String?
    /// Vaults, host key (0700 root).
    public var stateDirectory = "/var/lib/arca"
    /// Seconds without a request from a user after which whenUnlocked is removed; 0 = never.
    public var idleTimeout = 0
    /// How screen locks of several sessions combine.
    public var lockOn = LockPolicy.any
    /// Whether logind's `PrepareForSleep` removes every user's whenUnlocked items.
    public var lockOnSuspend = true
    /// Connections one uid may hold open at once.
    public var maxConnectionsPerUID = 64
    /// Connections arcad holds open at once, all uids together (each is a thread).
    public var maxConnections = 512
    /// Time a client has to send a whole request, and to take its reply; a client
    /// that has not finished sending within it (a silent or trickling one) is disconnected.
    public var clientTimeoutMilliseconds = 5_000
    /// How much of root's kernel-key quota each user's items may take
    /// (`kernel_keys_per_user`, `kernel_bytes_per_user`, `kernel_root_share`).
    public var kernelBudget = KernelBudget()
    /// The largest a user's vault file may grow, in bytes (`max_vault_bytes`); a write
    /// that finds it at or over this size fails with `errSecQuotaExceeded`.
    public var maxVaultBytes = 64 << 20
    /// The class of new Secret Service items (`arca-secretd`): afterFirstUnlock, so
    /// that network and mail agents keep working while the screen is locked.
    public var secretServiceClass = Accessibility.afterFirstUnlock
    /// The most Argon2id work (passes × MiB) arcad spends on one user's
    /// derivation, and the most a user may give their own vault.
    public var kdfMaxCost = 1024
    /// Milliseconds added to the system clock where sync reads physical time
    /// (`sync_clock_offset_ms`): how a test puts one machine's clock ahead or behind, which
    /// static binaries make impossible with LD_PRELOAD. 0 everywhere else.
    public var syncClockOffsetMilliseconds = 0
    /// Days a device of a sync circle may go without a fresher head before it is dormant
    /// (`sync_horizon_days`): tombstone collection stops waiting for its acknowledgement, and
    /// when it comes back it resyncs from a snapshot, its unseen edits of collected items
    /// becoming conflict siblings.
    public var syncHorizonDays = 30
    /// The largest backup one user may stage in arcad's memory for `arca export`/`import`
    /// (a backup moves in chunks; arcad never opens the user's file): `backup_staging_bytes`.
    public var backupStagingBytes = 256 << 20
    /// The most every user's staged backups may hold together: `backup_staging_total_bytes`.
    public var backupStagingTotalBytes = 512 << 20
    /// Seconds without a chunk after which another connection of the user may take a
    /// staging over: `backup_staging_idle_seconds`.
    public var backupStagingIdleSeconds = 600

    public init() {}

    /// The default configuration file.
    public static let defaultPath = "/etc/arca/arca.conf"

    /// Parses `key = value` lines; `#` starts a comment. An unknown key or a bad
    /// value is an error naming the file and line: a daemon that guards secrets
    /// should not start on a configuration it does not understand.
    public static func parse(_ text: String, file: String = defaultPath) throws -> DaemonConfig {
        var config = DaemonConfig()
        var keys: Set<String> = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty { continue }
            let where_ = "\(file):\(index + 1)"
            let parts = trimmed.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw ConfigError(location: where_, message: "expected 'key = value'") }
            let key = parts[0].trimmingWhitespace()
            let value = parts[1].trimmingWhitespace()
            try config.set(key: key, value: value, location: where_)
            keys.insert(key)
        }
        // A per-user cap above the total could never be reached. One key set alone moves the
        // other's default with it; both set that way is a mistake: say so rather than guess.
        switch (keys.contains("backup_staging_bytes"), keys.contains("backup_staging_total_bytes")) {
        case (false, _): config.backupStagingBytes = min(config.backupStagingBytes, config.backupStagingTotalBytes)
        case (true, false):
            config.backupStagingTotalBytes = max(config.backupStagingBytes, config.backupStagingTotalBytes)
        case (true, true): break
        }
        guard config.backupStagingBytes <= config.backupStagingTotalBytes else {
            throw ConfigError(
                location: file,
                message: "backup_staging_bytes (\(config.backupStagingBytes)) must not be more than "
                    + "backup_staging_total_bytes (\(config.backupStagingTotalBytes))")
        }
        return config
    }

    /// The highest `backup_staging_bytes` and `backup_staging_total_bytes`: 4 GiB.
    public static let maximumBackupStagingBytes = 4 << 30

    /// Refuses staging caps arcad could not hold: a total above half of `physicalMemory` bytes
    /// (arcad holds staged backups in memory; one user could otherwise exhaust it).
    public func checkBackupStaging(
        physicalMemory: Int = Argon2id.physicalMemory(), file: String = defaultPath
    ) throws(ConfigError) {
        guard backupStagingTotalBytes <= physicalMemory / 2 else {
            throw ConfigError(
                location: file,
                message: "backup_staging_total_bytes (\(backupStagingTotalBytes)) is more than half of this "
                    + "machine's memory (\(physicalMemory) bytes); lower it (and backup_staging_bytes)")
        }
    }

    private mutating func set(key: String, value: String, location: String) throws {
        func int(_ range: ClosedRange<Int>) throws -> Int {
            guard let n = Int(value), range.contains(n) else {
                throw ConfigError(
                    location: location, message: "\(key) must be a whole number in \(range), got '\(value)'")
            }
            return n
        }
        func path() throws -> String {
            guard value.hasPrefix("/") else {
                throw ConfigError(location: location, message: "\(key) must be an absolute path, got '\(value)'")
            }
            return value
        }
        switch key {
        case "socket": socketPath = try path()
        case "credentials_socket": credentialsSocket = try path()
        case "state_dir": stateDirectory = try path()
        case "idle_timeout": idleTimeout = try int(0...31_536_000)
        case "lock_on":
            guard let policy = LockPolicy(rawValue: value) else {
                throw ConfigError(location: location, message: "lock_on must be 'any' or 'all', got '\(value)'")
            }
            lockOn = policy
        case "lock_on_suspend":
            switch value {
            case "yes": lockOnSuspend = true
            case "no": lockOnSuspend = false
            default:
                throw ConfigError(location: location, message: "lock_on_suspend must be 'yes' or 'no', got '\(value)'")
            }
        case "max_connections_per_uid": maxConnectionsPerUID = try int(1...4096)
        case "max_connections": maxConnections = try int(1...65_536)
        case "client_timeout_ms": clientTimeoutMilliseconds = try int(100...600_000)
        case "kernel_keys_per_user": kernelBudget.keysPerUser = try int(0...1_000_000)
        case "kernel_bytes_per_user": kernelBudget.bytesPerUser = try int(0...1_000_000_000)
        case "kernel_root_share": kernelBudget.rootSharePercent = try int(0...90)
        case "max_vault_bytes": maxVaultBytes = try int(1 << 20...(1 << 40))
        case "secret_service_class":
            switch value {
            case "after-first-unlock": secretServiceClass = .afterFirstUnlock
            case "when-unlocked": secretServiceClass = .whenUnlocked
            default:
                throw ConfigError(
                    location: location,
                    message: "secret_service_class must be 'after-first-unlock' or 'when-unlocked', got '\(value)'")
            }
        case "kdf_max_cost": kdfMaxCost = try int(64...32_768)
        case "sync_clock_offset_ms": syncClockOffsetMilliseconds = try int(-31_536_000_000...31_536_000_000)
        case "sync_horizon_days": syncHorizonDays = try int(1...3650)
        case "backup_staging_bytes": backupStagingBytes = try int(1 << 20...Self.maximumBackupStagingBytes)
        case "backup_staging_total_bytes":
            backupStagingTotalBytes = try int(1 << 20...Self.maximumBackupStagingBytes)
        case "backup_staging_idle_seconds": backupStagingIdleSeconds = try int(1...86_400)
        default: throw ConfigError(location: location, message: "unknown key '\(key)'")
        }
    }
}

/// A configuration error: where, and what is wrong.
public struct ConfigError: Error, Equatable, CustomStringConvertible {
    /// `file:line`.
    public let location: String
    /// What is wrong.
    public let message: String
    public var description: String { "\(location): \(message)" }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[start...end]))
    }
}
