import ArcaCrypto
import Foundation
import Testing

@testable import ArcaSecretService

/// Known answers for `dh-ietf1024-sha256-aes128-cbc-pkcs7` (vectors in
/// Resources/session-crypto.json: the DH ones computed independently with Python's
/// big integers, HKDF from RFC 5869 A.3, AES-CBC from NIST SP 800-38A F.2.1).
@Suite struct SessionCryptoTests {
    static func vectors(_ key: String) throws -> [[String: String]] {
        let url = try #require(
            Bundle.module.url(
                forResource: "session-crypto", withExtension: "json",
                subdirectory: "Resources"))
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
        return object?[key] as? [[String: String]] ?? []
    }

    static func hex(_ s: String?) -> [UInt8] {
        let chars = Array((s ?? "").utf8)
        return stride(from: 0, to: chars.count, by: 2).compactMap {
            UInt8(String(decoding: chars[$0...$0 + 1], as: UTF8.self), radix: 16)
        }
    }

    static func secret(_ bytes: [UInt8]) throws -> SecretBytes {
        try bytes.withUnsafeBytes { try SecretBytes(copying: $0) }
    }

    @Test func diffieHellmanKnownAnswersIncludingALeadingZeroSharedSecretAndAOneBytePeerKey() throws {
        let vectors = try Self.vectors("dh")
        #expect(vectors.map { $0["name"] ?? "" } == ["random", "leading zero", "one-byte peer"])
        for v in vectors {
            let (ours, cipher) = try DHSession.negotiate(
                clientPublicKey: Self.hex(v["peer"]), privateKey: Self.secret(Self.hex(v["private"])))
            #expect(ours == Self.hex(v["public"]), "\(v["name"] ?? "")")
            #expect(cipher.key.withUnsafeBytes { Array($0) } == Self.hex(v["key"]), "\(v["name"] ?? "")")
        }
        #expect(Self.hex(vectors[1]["shared"]).first == 0)
    }

    @Test func hkdfAndAESKnownAnswers() throws {
        let h = try #require(try Self.vectors("hkdf").first)
        let okm = try DHSession.hkdfSHA256(Self.secret(Self.hex(h["ikm"])), length: 16)
        #expect(okm.withUnsafeBytes { Array($0) } == Self.hex(h["okm16"]))
        let a = try #require(try Self.vectors("aes128cbc").first)
        let cipher = SessionCipher(key: try Self.secret(Self.hex(a["key"])))
        let iv = Self.hex(a["iv"])
        let sealed = try cipher.encrypt(Self.secret(Self.hex(a["plaintext"])), iv: iv)
        #expect(sealed.count == 48)  // two blocks and a whole block of padding
        #expect(Array(sealed.prefix(32)) == Self.hex(a["ciphertext"]))
        let opened = try cipher.decrypt(iv: iv, ciphertext: sealed)
        #expect(opened.withUnsafeBytes { Array($0) } == Self.hex(a["plaintext"]))
    }

    @Test func bothSidesAgreeAndSecretsOfEveryLengthRoundTrip() throws {
        let clientPrivate = try SecretBytes.random(count: 128)
        let clientPublic = try Gcrypt.powm(base: [2], exponent: clientPrivate, modulus: DHSession.prime, width: 128)
        let (serverPublic, server) = try DHSession.negotiate(
            clientPublicKey: clientPublic.withUnsafeBytes { Array($0) })
        let (_, client) = try DHSession.negotiate(clientPublicKey: serverPublic, privateKey: clientPrivate)
        #expect(client.key == server.key)
        for length in [0, 1, 15, 16, 17, 1000] {
            let plain = try Self.secret([UInt8](repeating: 0x5A, count: length))
            let (iv, ciphertext) = try server.encrypt(plain)
            #expect(iv.count == 16 && ciphertext.count == (length / 16 + 1) * 16)
            #expect(try client.decrypt(iv: iv, ciphertext: ciphertext) == plain)
        }
    }

    @Test func badPublicKeysAndCiphertextsAreRefused() throws {
        var pMinusOne = DHSession.prime
        pMinusOne[127] -= 1
        let refused: [([UInt8], String)] = [
            ([], "the public key is 0 bytes; it must be 1 to 128"),
            ([UInt8](repeating: 1, count: 129), "the public key is 129 bytes; it must be 1 to 128"),
            ([0], "the public key is not between 2 and p-2"),
            ([1], "the public key is not between 2 and p-2"),
            ([0, 0, 1], "the public key is not between 2 and p-2"),
            (pMinusOne, "the public key is not between 2 and p-2"),
            (DHSession.prime, "the public key is not between 2 and p-2"),
            ([UInt8](repeating: 0xFF, count: 128), "the public key is not between 2 and p-2"),
        ]
        for (key, message) in refused {
            #expect(throws: SessionCryptoError.badPublicKey(message)) {
                _ = try DHSession.negotiate(clientPublicKey: key)
            }
        }
        pMinusOne[127] -= 1
        _ = try DHSession.negotiate(clientPublicKey: pMinusOne)  // p-2 is the largest accepted
        let (_, cipher) = try DHSession.negotiate(clientPublicKey: [2])
        #expect(throws: SessionCryptoError.badParameter("the IV is 15 bytes; it must be 16")) {
            _ = try cipher.decrypt(iv: [UInt8](repeating: 0, count: 15), ciphertext: [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: SessionCryptoError.badParameter("the ciphertext is 17 bytes, not whole 16-byte blocks")) {
            _ = try cipher.decrypt(iv: [UInt8](repeating: 0, count: 16), ciphertext: [UInt8](repeating: 0, count: 17))
        }
        // A block whose padding byte is 0 after decryption: find one by encrypting a
        // block ending in 0 with the same key and IV, then dropping the padding block.
        let zeroEnded = try Self.secret([UInt8](repeating: 0, count: 16))
        let iv = [UInt8](repeating: 3, count: 16)
        let sealed = try cipher.encrypt(zeroEnded, iv: iv)
        #expect(throws: SessionCryptoError.badPadding) {
            _ = try cipher.decrypt(iv: iv, ciphertext: Array(sealed.prefix(16)))
        }
    }
}
