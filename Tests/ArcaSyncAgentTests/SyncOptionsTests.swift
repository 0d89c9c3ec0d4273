import Testing

@testable import ArcaSyncAgent

@Suite struct SyncOptionsTests {
    static let address =
        String(repeating: "ab", count: 32) + "@A73WAPK-5QAOGTZ-SZO62VI-NDFOBMA-7VIFETD-MFNLHI6-ES53SRP-R7R5HAP"

    @Test func parsesVerbValuesAndFlags() throws {
        let options = try SyncOptions.parse(["approve", Self.address, "--sas=123456", "--yes", "--folder", "/f"])
        #expect(options.verb == "approve")
        #expect(options.positionals == [Self.address])
        #expect(options.values == ["sas": "123456", "folder": "/f"])
        #expect(options.flags == ["yes"])
    }

    @Test(arguments: [
        (["join"], "join takes one device (ID@SYNCTHING-ID)"),
        (["status", "x"], "status takes no arguments"),
        (["run", "--json"], "run does not take --json"),
        (["frobnicate"], "unknown verb frobnicate"),
        (["status", "--bogus"], "unknown option --bogus"),
        (["status", "-x"], "unknown option -x"),
        (["join", "--address"], "--address needs a value"),
        (["status", "--json=1"], "--json takes no value"),
        ([], "a verb is required"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) {
        #expect(throws: SyncAgentError.usage(message)) { try SyncOptions.parse(arguments) }
    }

    @Test func helpNeedsNoVerb() throws {
        #expect(try SyncOptions.parse(["--help"]).flags == ["help"])
        #expect(try SyncOptions.parse(["-h"]).flags == ["help"])
    }

    @Test func doubleDashEndsOptions() throws {
        #expect(try SyncOptions.parse(["remove", "--", "--yes"]).positionals == ["--yes"])
    }

    @Test func deviceAddressRoundTripsAndRejectsJunk() throws {
        let address = try DeviceAddress(parsing: Self.address.uppercased().replacingAll("@A73", "@A73"))
        #expect(address.description == Self.address)
        for bad in [
            "", "abc@DEF", Self.address + "@x", String(repeating: "ab", count: 32), "zz" + Self.address.dropFirst(2),
        ] {
            #expect(throws: SyncAgentError.self) { try DeviceAddress(parsing: String(bad)) }
        }
    }

    @Test func exitCodesAreDistinct() {
        let errors: [SyncAgentError] = [.usage(""), .syncthing(""), .arcad(""), .folder(""), .notConfirmed("")]
        #expect(errors.map(\.exitCode) == [2, 3, 4, 5, 6])
    }
}
