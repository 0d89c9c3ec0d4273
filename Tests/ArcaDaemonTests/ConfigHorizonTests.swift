import Testing

@testable import ArcaDaemon

/// `sync_horizon_days` (issue 17): how long a sync device may stay away.
@Suite("arca.conf sync_horizon_days")
struct ConfigHorizonTests {
    @Test("default 30, a value, and out-of-range values refused with the line")
    func horizon() throws {
        #expect(try DaemonConfig.parse("").syncHorizonDays == 30)
        #expect(try DaemonConfig.parse("sync_horizon_days = 7").syncHorizonDays == 7)
        #expect(try DaemonConfig.parse("sync_horizon_days = 3650").syncHorizonDays == 3650)
        #expect(
            throws: ConfigError(
                location: "t.conf:1", message: "sync_horizon_days must be a whole number in 1...3650, got '0'")
        ) { try DaemonConfig.parse("sync_horizon_days = 0", file: "t.conf") }
        #expect(
            throws: ConfigError(
                location: "t.conf:2", message: "sync_horizon_days must be a whole number in 1...3650, got '3651'")
        ) { try DaemonConfig.parse("\nsync_horizon_days = 3651", file: "t.conf") }
    }
}
