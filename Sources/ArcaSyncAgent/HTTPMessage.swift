/// The few bytes of HTTP the agent speaks to Syncthing's REST API on loopback: HTTP/1.0
/// requests (so Go's server closes after the body and never answers chunked), and a total
/// parser of the response (status line, headers, body up to the close).
enum HTTPMessage {
    /// A request's bytes. `apiKey` goes in X-API-Key; a body is sent as JSON.
    static func request(method: String, target: String, port: UInt16, apiKey: String, body: [UInt8]?) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\nX-API-Key: \(apiKey)\r\n"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + (body ?? [])
    }

    /// A parsed response.
    struct Response: Equatable {
        var status: Int
        var body: [UInt8]
    }

    /// The status and body of a whole response, or nil when it is not HTTP. A Content-Length
    /// shorter than what arrived trims the body; longer means the peer closed early (nil).
    static func parse(_ bytes: [UInt8]) -> Response? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4,
            let end = (0...(bytes.count - 4)).first(where: { bytes[$0..<($0 + 4)].elementsEqual(separator) })
        else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard let statusLine = lines.first else { return nil }
        let words = statusLine.split(separator: " ", maxSplits: 2)
        guard words.count >= 2, words[0].hasPrefix("HTTP/1."), let status = Int(words[1]), (100...599).contains(status)
        else { return nil }
        var body = Array(bytes[(end + 4)...])
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { continue }
            guard let length = Int(parts[1].trimmingCharacters(in: " \t")), length >= 0, length <= body.count else {
                return nil
            }
            body = Array(body.prefix(length))
        }
        return Response(status: status, body: body)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
