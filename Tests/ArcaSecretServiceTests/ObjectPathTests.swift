import ArcaProtocol
import Testing

@testable import ArcaSecretService

/// Object paths: which object each path names, aliases answering as the login
/// collection, and the stable item names made from vault references.
@Suite struct ObjectPathTests {
    static let base = "/org/freedesktop/secrets"

    @Test func pathsNameTheirObjects() {
        let ref = "0123456789abcdef0123456789abcdef"
        let cases: [(String, SecretObject?)] = [
            (Self.base, .service),
            (Self.base + "/collection/login", .collection(.login)),
            (Self.base + "/aliases/default", .collection(.login)),
            (Self.base + "/aliases/login", .collection(.login)),
            (Self.base + "/collection/session", .collection(.session)),
            (Self.base + "/collection/login/" + ref, .item(.login, ref)),
            (Self.base + "/aliases/default/" + ref, .item(.login, ref)),
            (Self.base + "/collection/session/7", .item(.session, "7")),
            (Self.base + "/session/3", .session("3")),
            (Self.base + "/prompt/4", .prompt("4")),
            (Self.base + "/collection/default", nil),  // an alias is not a collection name
            (Self.base + "/aliases/other", nil),
            (Self.base + "/collection/login/", nil),
            (Self.base + "/collection/login/a/b", nil),
            (Self.base + "/session/", nil),
            (Self.base + "x", nil),
            ("/", nil),
        ]
        for (path, object) in cases { #expect(SecretObject(path: path) == object, "\(path)") }
        #expect(SecretObject.item(.login, ref).path == Self.base + "/collection/login/" + ref)
        #expect(SecretObject(path: Self.base + "/aliases/default")?.path == Self.base + "/collection/login")
    }

    @Test func referencesRoundTripAsThirtyTwoHexDigits() {
        let bytes: [UInt8] = [0x00, 0xff, 0x10, 0xab] + [UInt8](repeating: 7, count: 12)
        let text = ReferenceText.encode(bytes)
        #expect(text == "00ff10ab070707070707070707070707")
        #expect(ReferenceText.decode(text) == bytes)
        #expect(ReferenceText.decode("00FF10AB070707070707070707070707") == nil)  // paths are lowercase
        #expect(ReferenceText.decode("00ff") == nil)
        #expect(ReferenceText.decode(String(repeating: "g", count: 32)) == nil)
    }

    @Test func errorNamesAreTheOnesClientsTestFor() {
        #expect(SecretError.isLocked.name == "org.freedesktop.Secret.Error.IsLocked")
        #expect(SecretError.noSession.name == "org.freedesktop.Secret.Error.NoSession")
        #expect(SecretError.noSuchObject.name == "org.freedesktop.Secret.Error.NoSuchObject")
        #expect(SecretError.notSupported("x").name == "org.freedesktop.DBus.Error.NotSupported")
        #expect(SecretError.unknownObject("x").name == "org.freedesktop.DBus.Error.UnknownObject")
        #expect(SecretError(status: .interactionNotAllowed, message: "") == .isLocked)
        #expect(SecretError(status: .itemNotFound, message: "") == .noSuchObject)
        #expect(SecretError(status: .param, message: "bad") == .invalidArgs("bad"))
        // A batch of reads splits on arcad's `bufferTooSmall`, and on the `.decode` error with
        // exactly that text that an arcad from before the status sent (mixed versions across an
        // upgrade); any other `.decode` error is an ordinary failure.
        let tooLarge = SecretError(status: .bufferTooSmall, message: ProtocolLimits.replyTooLargeMessage)
        #expect(tooLarge == .replyTooLarge("reply too large"))
        #expect(tooLarge.name == "org.freedesktop.DBus.Error.Failed")
        #expect(tooLarge.message == "reply too large")
        #expect(SecretError(status: .decode, message: "reply too large") == .replyTooLarge("reply too large"))
        #expect(SecretError(status: .decode, message: "reply too large.") == .failed("reply too large."))
        #expect(SecretError(status: .decode, message: "damaged") == .failed("damaged"))
        #expect(SecretError(status: .notAvailable, message: "reply too large") == .failed("reply too large"))
    }

    @Test func busValueSignatures() {
        let secret = BusValue.structure([.objectPath("/s"), .bytes([]), .bytes([1]), .string("text/plain")])
        #expect(secret.signature == "(oayays)")
        #expect(
            BusValue.array(elementSignature: "{o(oayays)}", [.entry(.objectPath("/i"), secret)]).signature
                == "a{o(oayays)}")
        #expect(BusValue.properties(["Locked": .bool(true)]).signature == "a{sv}")
        #expect(
            BusValue.stringDictionary(["b": "2", "a": "1"])
                == .array(
                    elementSignature: "{ss}", [.entry(.string("a"), .string("1")), .entry(.string("b"), .string("2"))]))
    }
}
