import Testing

@testable import ArcaCrypto

@Suite("Known-answer vectors")
struct KnownAnswerTests {
    @Test("Argon2id v1.3 reference vectors")
    func argon2id() throws {
        let vectors = try Resources.vectors("argon2id")
        #expect(vectors.count == 4)
        for v in vectors {
            let password = try SecretBytes.testing(Hex.decode(v["password"] as? String ?? ""))
            let params = KDFParameters(
                opsLimit: UInt64(v["t"] as? Int ?? 0), memoryLimit: (v["m_kib"] as? Int ?? 0) * 1024,
                salt: Hex.decode(v["salt"] as? String ?? ""))
            let key = try Argon2id.deriveKey(password: password, parameters: params)
            #expect(Hex.encode(key.bytesForTesting) == v["tag"] as? String)
        }
    }

    @Test("XChaCha20-Poly1305 draft vector: seal and open")
    func xchacha() throws {
        let v = try #require(try Resources.vectors("xchacha20poly1305").first)
        let key = try SecretBytes.testing(Hex.decode(v["key"] as? String ?? ""))
        let nonce = Hex.decode(v["nonce"] as? String ?? "")
        let aad = Hex.decode(v["aad"] as? String ?? "")
        let plaintext = Hex.decode(v["plaintext"] as? String ?? "")
        let expected = Hex.decode((v["ciphertext"] as? String ?? "") + (v["tag"] as? String ?? ""))
        let box = try AEAD.seal(plaintext, key: key, associatedData: aad, nonce: nonce)
        #expect(box.nonce == nonce)
        #expect(Hex.encode(box.ciphertext) == Hex.encode(expected))
        let opened = try AEAD.open(try SealedBox(nonce: nonce, ciphertext: expected), key: key, associatedData: aad)
        #expect(opened.bytesForTesting == plaintext)
    }

    @Test("BLAKE2b vectors (RFC 7693, reference KAT)")
    func blake2b() throws {
        let vectors = try Resources.vectors("hashes", "blake2b")
        #expect(vectors.count == 2)
        for v in vectors {
            let keyBytes = Hex.decode(v["key"] as? String ?? "")
            let key = keyBytes.isEmpty ? nil : try SecretBytes.testing(keyBytes)
            let digest = try KeyedHash.blake2b(Hex.decode(v["message"] as? String ?? ""), key: key, outputLength: 64)
            #expect(Hex.encode(digest) == v["digest"] as? String)
        }
    }

    @Test("HMAC-SHA-256 and HMAC-SHA-512 (RFC 4231)")
    func hmac() throws {
        for v in try Resources.vectors("hashes", "hmac_sha256") {
            let key = try SecretBytes.testing(Hex.decode(v["key"] as? String ?? ""))
            #expect(
                Hex.encode(KeyedHash.hmacSHA256(Hex.decode(v["message"] as? String ?? ""), key: key)) == v["mac"]
                    as? String)
        }
        for v in try Resources.vectors("hashes", "hmac_sha512") {
            let key = try SecretBytes.testing(Hex.decode(v["key"] as? String ?? ""))
            #expect(
                Hex.encode(KeyedHash.hmacSHA512(Hex.decode(v["message"] as? String ?? ""), key: key)) == v["mac"]
                    as? String)
        }
    }
}
