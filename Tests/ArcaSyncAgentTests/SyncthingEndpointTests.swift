import Testing

@testable import ArcaSyncAgent

@Suite struct SyncthingEndpointTests {
    static let config = """
        <configuration version="36">
            <device id="X" name="vm"><address>dynamic</address></device>
            <gui enabled="true" tls="false" debugging="false">
                <address>127.0.0.1:8384</address>
                <apikey>JSpjM6RSohF2brXWThNGPdLSkT7NADr3</apikey>
            </gui>
        </configuration>
        """

    @Test func readsPortAndKeyFromTheGUISection() throws {
        #expect(
            try SyncthingEndpoint.parse(configXML: Self.config)
                == SyncthingEndpoint(port: 8384, apiKey: "JSpjM6RSohF2brXWThNGPdLSkT7NADr3"))
    }

    @Test func refusesANonLoopbackGUI() {
        let text = Self.config.replacingAll("127.0.0.1:8384", "192.168.1.5:8384")
        #expect(throws: SyncAgentError.syncthing("the GUI listens on 192.168.1.5, not on loopback (127.0.0.1)")) {
            try SyncthingEndpoint.parse(configXML: text)
        }
    }

    @Test func refusesTLSAndAMissingKey() {
        #expect(throws: SyncAgentError.self) {
            try SyncthingEndpoint.parse(configXML: Self.config.replacingAll(#"tls="false""#, #"tls="true""#))
        }
        #expect(throws: SyncAgentError.syncthing("config.xml has no GUI address or API key")) {
            try SyncthingEndpoint.parse(
                configXML: Self.config.replacingAll("<apikey>JSpjM6RSohF2brXWThNGPdLSkT7NADr3</apikey>", ""))
        }
        #expect(throws: SyncAgentError.syncthing("config.xml has no <gui> section")) {
            try SyncthingEndpoint.parse(configXML: "<configuration/>")
        }
    }

    @Test func defaultHomesPreferTheStateDirectory() {
        #expect(
            SyncthingEndpoint.defaultHomes(home: "/h", xdgStateHome: nil, xdgConfigHome: "")
                == ["/h/.local/state/syncthing", "/h/.config/syncthing"])
        #expect(
            SyncthingEndpoint.defaultHomes(home: "/h", xdgStateHome: "/s", xdgConfigHome: "/c")
                == ["/s/syncthing", "/c/syncthing"])
    }
}

extension String {
    func replacingAll(_ a: String, _ b: String) -> String {
        split(separator: a, omittingEmptySubsequences: false).joined(separator: b)
    }
}
