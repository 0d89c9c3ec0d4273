/// Where the user's Syncthing REST API listens and its API key, read from the instance's
/// config.xml (`<gui><address>` and `<apikey>`). Only a loopback address is accepted: the
/// agent never sends the key, or anything else, off the machine.
public struct SyncthingEndpoint: Sendable, Equatable {
    /// The GUI/REST port on 127.0.0.1.
    public var port: UInt16
    /// The API key (X-API-Key). Not a vault secret, but never printed.
    public var apiKey: String

    /// An endpoint from its parts.
    public init(port: UInt16, apiKey: String) {
        self.port = port
        self.apiKey = apiKey
    }

    /// The directories searched for config.xml, in order, when no `--syncthing-home` is given:
    /// Syncthing ≥ 1.27's state directory, then the older config directory.
    public static func defaultHomes(home: String, xdgStateHome: String?, xdgConfigHome: String?) -> [String] {
        [
            (xdgStateHome.flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/state") + "/syncthing",
            (xdgConfigHome.flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config") + "/syncthing",
        ]
    }

    /// The endpoint of a config.xml's text.
    public static func parse(configXML text: String) throws(SyncAgentError) -> SyncthingEndpoint {
        guard let gui = element("gui", in: text) else { throw .syncthing("config.xml has no <gui> section") }
        if gui.attributes.contains(#"tls="true""#) {
            throw .syncthing("the GUI uses TLS; arca-sync speaks plain HTTP on loopback only (set tls=\"false\")")
        }
        guard let address = element("address", in: gui.body)?.body.trimmed,
            let key = element("apikey", in: gui.body)?
                .body.trimmed, !key.isEmpty
        else { throw .syncthing("config.xml has no GUI address or API key") }
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw .syncthing("cannot read the GUI address \(address)")
        }
        let host = String(address[..<colon])
        guard ["127.0.0.1", "localhost", "0.0.0.0", ""].contains(host) || host.hasPrefix("127.") else {
            throw .syncthing("the GUI listens on \(host), not on loopback (127.0.0.1)")
        }
        return SyncthingEndpoint(port: port, apiKey: key)
    }

    /// The first `<name ...>body</name>` of `text`: its attribute text and body.
    static func element(_ name: String, in text: String) -> (attributes: String, body: String)? {
        let all = Substring(text)
        guard let open = all.firstRange(of: "<\(name)") else { return nil }
        let rest = all[open.upperBound...]
        guard let headEnd = rest.firstRange(of: ">"), let close = rest.firstRange(of: "</\(name)>"),
            headEnd.lowerBound < close.lowerBound
        else { return nil }
        return (String(rest[..<headEnd.lowerBound]), String(rest[headEnd.upperBound..<close.lowerBound]))
    }
}

extension String {
    var trimmed: String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
