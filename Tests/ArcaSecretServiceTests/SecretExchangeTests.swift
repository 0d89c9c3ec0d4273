import ArcaCrypto
import Testing

@testable import ArcaSecretService

/// gcr's secret exchange (sx-aes-1), as the system prompter sends the password back.
@Suite struct SecretExchangeTests {
    static func secret(_ text: String) throws -> SecretBytes {
        try Array(text.utf8).withUnsafeBytes { try SecretBytes(copying: $0) }
    }

    @Test func base64FollowsRFC4648() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9*", "=Zm9"] { #expect(Base64.decode(bad) == nil) }
    }

    @Test func theModp1536GroupIsRFC3526s() {
        let p = DHGroup.modp1536.prime
        #expect(p.count == 192)
        #expect(p.prefix(8).allSatisfy { $0 == 0xFF } && p.suffix(8).allSatisfy { $0 == 0xFF })
        // The 1024-bit Oakley prime is the same construction: equal up to where π's bits are cut.
        #expect(Array(p.prefix(16)) == Array(DHSession.prime.prefix(16)))
    }

    @Test func aPromptersAnswerDecryptsToThePassword() throws {
        let ours = try SecretExchange.start()
        #expect(ours.pair.privateKey.count == DHKeyPair.privateKeyLength)
        #expect(ours.message.hasPrefix("[sx-aes-1]\npublic="))
        // The prompter's side, as gcr-secret-exchange.c does it.
        let fields = try SecretExchange.parse(ours.message)
        let theirs = try DHKeyPair.generate(in: .modp1536)
        let peer = try #require(Base64.decode(fields["public"] ?? ""))
        let key = try DHSession.hkdfSHA256(try theirs.sharedSecret(with: peer), length: 16)
        let (iv, sealed) = try SessionCipher(key: key).encrypt(try Self.secret("pässword"))
        let answer =
            "[sx-aes-1]\npublic=\(Base64.encode(theirs.publicKey))\nsecret=\(Base64.encode(sealed))\n"
            + "iv=\(Base64.encode(iv))\n"
        let password = try #require(try ours.receive(answer))
        #expect(password.withUnsafeBytes { Array($0) } == Array("pässword".utf8))
        // A message without a secret carries none; a foreign group or a bad key is refused.
        #expect(try ours.receive("[sx-aes-1]\npublic=\(Base64.encode(theirs.publicKey))\n") == nil)
        #expect(throws: SessionCryptoError.badParameter("not an sx-aes-1 exchange")) {
            _ = try ours.receive("[other]\npublic=\(Base64.encode(theirs.publicKey))\n")
        }
        #expect(throws: SessionCryptoError.badPublicKey("the public key is not between 2 and p-2")) {
            _ = try ours.receive("[sx-aes-1]\npublic=AQ==\nsecret=\(Base64.encode(sealed))\niv=\(Base64.encode(iv))\n")
        }
    }
}
