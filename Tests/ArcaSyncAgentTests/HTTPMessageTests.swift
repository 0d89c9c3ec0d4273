import Testing

@testable import ArcaSyncAgent

@Suite struct HTTPMessageTests {
    @Test func requestCarriesKeyAndLength() {
        let bytes = HTTPMessage.request(
            method: "PUT", target: "/rest/config/devices/X", port: 8384, apiKey: "k3y", body: Array("{}".utf8))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "PUT /rest/config/devices/X HTTP/1.0\r\nHost: 127.0.0.1:8384\r\nX-API-Key: k3y\r\n"
                + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    }

    @Test func requestWithoutBodyHasNoContentType() {
        let text = String(
            decoding: HTTPMessage.request(method: "GET", target: "/a", port: 1, apiKey: "k", body: nil), as: UTF8.self)
        #expect(text == "GET /a HTTP/1.0\r\nHost: 127.0.0.1:1\r\nX-API-Key: k\r\n\r\n")
    }

    @Test func parsesStatusAndBody() {
        let reply = Array("HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"myID\":\"A\"}".utf8)
        #expect(HTTPMessage.parse(reply) == .init(status: 200, body: Array("{\"myID\":\"A\"}".utf8)))
    }

    @Test func contentLengthTrimsAndShortBodyIsRejected() {
        #expect(
            HTTPMessage.parse(Array("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabcdef".utf8))
                == .init(status: 404, body: Array("abc".utf8)))
        #expect(HTTPMessage.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc".utf8)) == nil)
    }

    @Test(arguments: [
        "", "garbage", "HTTP/1.1 200 OK\r\n", "SMTP 200 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n",
        "HTTP/1.1 999 X\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    ])
    func malformedRepliesAreNil(_ text: String) {
        #expect(HTTPMessage.parse(Array(text.utf8)) == nil)
    }

    @Test func queryEscapesAllButSafeCharacters() {
        #expect(SyncthingClient.query("arca-sync/ab cd&x=1") == "arca-sync/ab%20cd%26x%3D1")
    }

    @Test func eventDecodingReadsFolderAndItem() throws {
        let client = SyncthingClient(endpoint: .init(port: 1, apiKey: "k"))
        let json = #"""
            [{"id":7,"type":"ItemFinished","time":"x","data":{"folder":"arca-sync","item":"ab/head","error":null}},
             {"id":8,"type":"ConfigSaved","data":{"version":36}},{"id":9,"type":"Ping","data":null}]
            """#
        let events = try client.decode([SyncthingEvent].self, Array(json.utf8))
        #expect(
            events == [
                .init(id: 7, type: "ItemFinished", folder: "arca-sync", item: "ab/head"),
                .init(id: 8, type: "ConfigSaved", folder: nil, item: nil),
                .init(id: 9, type: "Ping", folder: nil, item: nil),
            ])
    }
}
