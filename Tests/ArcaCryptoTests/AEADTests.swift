import Testing

@testable import ArcaCrypto

@Suite("XChaCha20-Poly1305")
struct AEADTests {
    let key: SecretBytes
    let message: [UInt8] = Array("a secret worth 64 bytes, padded out to exactly that: 0123456789".utf8)
    let associatedData: [UInt8] = Array("item:42|class:wu".utf8)

    init() throws { key = try SecretBytes.random(count: AEAD.keyLength) }

    @Test("seal then open returns the message, nonces differ per seal")
    func roundTrip() throws {
        let a = try AEAD.seal(message, key: key, associatedData: associatedData)
        let b = try AEAD.seal(message, key: key, associatedData: associatedData)
        #expect(a.nonce != b.nonce)
        #expect(a.ciphertext.count == message.count + 16)
        #expect(try AEAD.open(a, key: key, associatedData: associatedData).bytesForTesting == message)
        #expect(
            try AEAD.openBytes(SealedBox(combined: b.combined), key: key, associatedData: associatedData) == message)
    }

    @Test("flipping any bit pattern in any byte of nonce, ciphertext, tag or associated data fails to open")
    func everyBytePosition() throws {
        let box = try AEAD.seal(message, key: key, associatedData: associatedData)
        let combined = box.combined
        var attempts = 0
        for position in combined.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var altered = combined
                altered[position] ^= flip
                attempts += 1
                #expect(throws: CryptoError.authenticationFailed) {
                    try AEAD.open(SealedBox(combined: altered), key: key, associatedData: associatedData)
                }
            }
        }
        for position in associatedData.indices {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var altered = associatedData
                altered[position] ^= flip
                attempts += 1
                #expect(throws: CryptoError.authenticationFailed) {
                    try AEAD.open(box, key: key, associatedData: altered)
                }
            }
        }
        #expect(attempts == 3 * (24 + message.count + 16 + associatedData.count))
    }

    @Test("truncated or extended boxes and missing associated data fail")
    func lengthChanges() throws {
        let box = try AEAD.seal(message, key: key, associatedData: associatedData)
        let combined = box.combined
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(SealedBox(combined: Array(combined.dropLast())), key: key, associatedData: associatedData)
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(SealedBox(combined: combined + [0]), key: key, associatedData: associatedData)
        }
        #expect(throws: CryptoError.authenticationFailed) { try AEAD.open(box, key: key) }
        #expect(throws: CryptoError.invalidLength(what: "sealed box", expected: 40, actual: 39)) {
            try SealedBox(combined: Array(combined.prefix(39)))
        }
    }

    @Test("a wrong key throws, it does not crash")
    func wrongKey() throws {
        let box = try AEAD.seal(message, key: key, associatedData: associatedData)
        let other = try SecretBytes.random(count: AEAD.keyLength)
        #expect(throws: CryptoError.authenticationFailed) {
            try AEAD.open(box, key: other, associatedData: associatedData)
        }
        let short = try SecretBytes.random(count: 16)
        #expect(throws: CryptoError.invalidLength(what: "AEAD key", expected: 32, actual: 16)) {
            try AEAD.open(box, key: short, associatedData: associatedData)
        }
        #expect(throws: CryptoError.invalidLength(what: "nonce", expected: 24, actual: 12)) {
            try AEAD.seal(message, key: key, nonce: [UInt8](repeating: 0, count: 12))
        }
    }

    @Test("empty message seals to a bare tag and opens to empty")
    func emptyMessage() throws {
        let box = try AEAD.seal([UInt8](), key: key)
        #expect(box.ciphertext.count == 16)
        #expect(try AEAD.open(box, key: key).count == 0)
    }
}

@Suite("Key wrapping, sub-keys, blind index")
struct KeyHierarchyTests {
    @Test("wrap and unwrap; the context is bound")
    func wrap() throws {
        let kek = try SecretBytes.random(count: 32)
        let key = try SecretBytes.random(count: 32)
        let wrapped = try KeyWrap.wrap(key, with: kek, context: Array("vault-A/master".utf8))
        #expect(wrapped.count == KeyWrap.wrappedLength)
        #expect(try KeyWrap.unwrap(wrapped, with: kek, context: Array("vault-A/master".utf8)) == key)
        #expect(throws: CryptoError.authenticationFailed) {
            try KeyWrap.unwrap(wrapped, with: kek, context: Array("vault-B/master".utf8))
        }
        #expect(throws: CryptoError.authenticationFailed) {
            try KeyWrap.unwrap(wrapped, with: try SecretBytes.random(count: 32), context: Array("vault-A/master".utf8))
        }
    }

    @Test("sub-keys are deterministic, label-separated, and the host secret changes them")
    func subkeys() throws {
        let master = try SecretBytes.testing([UInt8](repeating: 7, count: 32))
        let a1 = try SubkeyDerivation.derive(from: master, label: "class/whenUnlocked")
        let a2 = try SubkeyDerivation.derive(from: master, label: "class/whenUnlocked")
        let b = try SubkeyDerivation.derive(from: master, label: "class/afterFirstUnlock")
        let host = try SecretBytes.testing([UInt8](repeating: 9, count: 32))
        let c = try SubkeyDerivation.derive(from: master, label: "class/whenUnlocked", extra: host)
        #expect(a1 == a2)
        #expect(a1 != b)
        #expect(a1 != c)
        #expect(a1.count == 32)
        // Pinned so that a change of the derivation (which would orphan every vault) fails here.
        #expect(
            Hex.encode(a1.bytesForTesting)
                == Hex.encode(
                    try KeyedHash.blake2b(
                        Array("arca-kdf\u{0}class/whenUnlocked\u{0}".utf8), key: master, outputLength: 32)))
    }

    @Test("blind index tags are keyed")
    func blindIndex() throws {
        let i1 = BlindIndex(key: try SecretBytes.random(count: 32))
        let i2 = BlindIndex(key: try SecretBytes.random(count: 32))
        let v = Array("service\u{0}account".utf8)
        #expect(try i1.tag(v) == i1.tag(v))
        #expect(try i1.tag(v) != i2.tag(v))
        #expect(try i1.tag(v).count == 32)
    }

    @Test("random bytes differ")
    func random() throws {
        #expect(SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
        #expect(try SecretBytes.random(count: 32) != SecretBytes.random(count: 32))
    }
}
