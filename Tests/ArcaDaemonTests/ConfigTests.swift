import Testing

@testable import ArcaDaemon

@Suite("arca.conf")
struct ConfigTests {
    @Test("defaults")
    func defaults() throws {
        let c = try DaemonConfig.parse("")
        #expect(c == DaemonConfig())
        #expect(c.socketPath == "/run/arca/arcad.sock")
        #expect(c.stateDirectory == "/var/lib/arca")
        #expect(c.credentialsSocket == "/run/arca/credentials.sock")
        #expect(c.lockOn == .any)
        #expect(c.idleTimeout == 0)
        #expect(c.kdfMaxCost == 1024)
        #expect(c.syncClockOffsetMilliseconds == 0)
        // The credentials socket follows the request socket unless set.
        var moved = c
        moved.socketPath = "/tmp/t/arcad.sock"
        #expect(moved.credentialsSocket == "/tmp/t/credentials.sock")
    }

    @Test("every key, comments and blank lines")
    func everyKey() throws {
        let c = try DaemonConfig.parse(
            """
            # arcad configuration
            socket = /tmp/a.sock
              state_dir = /tmp/state   # trailing comment

            idle_timeout = 900
            lock_on = all
            max_connections_per_uid = 8
            max_connections = 100
            client_timeout_ms=2000
            credentials_socket = /tmp/cred.sock
            kdf_max_cost = 512
            sync_clock_offset_ms = -600000
            """)
        #expect(c.socketPath == "/tmp/a.sock")
        #expect(c.stateDirectory == "/tmp/state")
        #expect(c.idleTimeout == 900)
        #expect(c.lockOn == .all)
        #expect(c.maxConnectionsPerUID == 8)
        #expect(c.maxConnections == 100)
        #expect(DaemonConfig().maxConnections == 512)
        #expect(c.clientTimeoutMilliseconds == 2000)
        #expect(c.credentialsSocket == "/tmp/cred.sock")
        #expect(c.kdfMaxCost == 512)
        #expect(c.syncClockOffsetMilliseconds == -600_000)
    }

    @Test("errors name the file and line")
    func errors() {
        #expect(throws: ConfigError(location: "t.conf:2", message: "unknown key 'sockett'")) {
            try DaemonConfig.parse("\nsockett = /x", file: "t.conf")
        }
        #expect(throws: ConfigError(location: "t.conf:1", message: "expected 'key = value'")) {
            try DaemonConfig.parse("socket", file: "t.conf")
        }
        #expect(throws: ConfigError(location: "t.conf:1", message: "lock_on must be 'any' or 'all', got 'some'")) {
            try DaemonConfig.parse("lock_on = some", file: "t.conf")
        }
        #expect(
            throws: ConfigError(
                location: "t.conf:1", message: "idle_timeout must be a whole number in 0...31536000, got '-1'")
        ) {
            try DaemonConfig.parse("idle_timeout = -1", file: "t.conf")
        }
        #expect(
            throws: ConfigError(
                location: "t.conf:1", message: "max_connections must be a whole number in 1...65536, got '0'")
        ) {
            try DaemonConfig.parse("max_connections = 0", file: "t.conf")
        }
        #expect(throws: ConfigError(location: "t.conf:1", message: "state_dir must be an absolute path, got 'var/lib'"))
        {
            try DaemonConfig.parse("state_dir = var/lib", file: "t.conf")
        }
        #expect(
            throws: ConfigError(
                location: "t.conf:1", message: "credentials_socket must be an absolute path, got 'c.sock'")
        ) {
            try DaemonConfig.parse("credentials_socket = c.sock", file: "t.conf")
        }
        let cost = ConfigError(
            location: "t.conf:1", message: "kdf_max_cost must be a whole number in 64...32768, got '32'")
        #expect(throws: cost) {
            try DaemonConfig.parse("kdf_max_cost = 32", file: "t.conf")
        }
    }
}
