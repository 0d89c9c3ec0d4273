import ArcaProtocol
import Glibc
import Testing

@testable import ArcaCLI

@Suite struct FormatTests {
    @Test func exitCodeMapping() {
        let expected: [(ArcaStatus, Int32)] = [
            (.itemNotFound, 44), (.duplicateItem, 45), (.interactionNotAllowed, 46), (.missingEntitlement, 47),
            (.notAvailable, 69), (.authFailed, 1), (.param, 1), (.decode, 1),
        ]
        for (status, code) in expected {
            #expect(CLIError.status(status, what: "x", detail: "").exitCode.rawValue == code, "\(status)")
        }
        #expect(CLIError.usage(UsageError("u")).exitCode == .usage)
        #expect(CLIError.failure(what: "a", why: "b").exitCode == .error)
        #expect(CLIError.failure(what: "a", why: "b").message == "arca: a: b")
        #expect(CLIError.status(.itemNotFound, what: "get", detail: "ignored").message == "arca: get: no such item")
    }

    @Test("busy is never 'not running': a refusal from a running arcad, a dropped or unanswered request → 75")
    func busyIsNotNotRunning() {
        let busy = CLIError.reply(
            .notAvailable, message: "arcad is busy deriving keys for this user; try again",
            what: "unlock")
        #expect(busy == .busy(what: "unlock", detail: "arcad is busy deriving keys for this user; try again"))
        #expect(busy.exitCode == .busy)
        #expect(busy.exitCode.rawValue == 75)
        #expect(busy.message == "arca: unlock: arcad is busy deriving keys for this user; try again")
        #expect(
            CLIError.reply(.notAvailable, message: "", what: "get").message
                == "arca: get: arcad cannot serve this now; try again")
        #expect(CLIError.request(.timedOut, what: "unlock").exitCode == .busy)
        #expect(
            CLIError.request(.connectionClosed, what: "unlock").message
                == "arca: unlock: arcad closed the connection")
        let dead = CLIError.request(.notRunning(path: "/x.sock", errno: .noSuchFileOrDirectory), what: "get")
        #expect(dead.exitCode == .notRunning)
        #expect(dead.message == "arca: get: arcad is not running (/x.sock: No such file or directory)")
        // Replies keep arcad's text only where the code says nothing by itself.
        #expect(CLIError.reply(.param, message: "bad", what: "add") == .status(.param, what: "add", detail: "bad"))
        #expect(
            CLIError.reply(.itemNotFound, message: "x", what: "get")
                == .status(.itemNotFound, what: "get", detail: ""))
    }

    @Test func isoDates() {
        #expect(Format.isoDate(microseconds: 0) == "1970-01-01T00:00:00Z")
        #expect(Format.isoDate(microseconds: 1_795_954_719_000_000) == "2026-11-29T12:18:39Z")
        #expect(Format.isoDate(microseconds: 951_782_400_000_000) == "2000-02-29T00:00:00Z")
        #expect(Format.isoDate(microseconds: -1) == "1969-12-31T23:59:59Z")
    }

    @Test func base64() {
        #expect(Format.base64(Array("".utf8)) == [])
        #expect(String(decoding: Format.base64(Array("f".utf8)), as: UTF8.self) == "Zg==")
        #expect(String(decoding: Format.base64(Array("fo".utf8)), as: UTF8.self) == "Zm8=")
        #expect(String(decoding: Format.base64(Array("foobar".utf8)), as: UTF8.self) == "Zm9vYmFy")
    }

    @Test func jsonEscaping() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a")
        writer.string("q\"\\\n\u{1}é")
        writer.key("b")
        writer.beginArray()
        writer.number(1)
        writer.bool(false)
        writer.endArray()
        writer.endObject()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == "{\"a\":\"q\\\"\\\\\\n\\u0001é\",\"b\":[1,false]}")
    }
}
