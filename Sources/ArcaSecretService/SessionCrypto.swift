import ArcaCrypto

/// A Secret Service session algorithm failed: a client's bad key or ciphertext, or the library.
public enum SessionCryptoError: Error, Equatable, Sendable {
    /// The client's DH public key is empty, longer than 128 bytes, or not in 2...p-2.
    case badPublicKey(String)
    /// A wrong-sized IV or a ciphertext that is not whole blocks.
    case badParameter(String)
    /// The decrypted padding is not PKCS#7.
    case badPadding
    /// libgcrypt failed (never a client's fault).
    case library(String)
}

/// `dh-ietf1024-sha256-aes128-cbc-pkcs7` of the freedesktop Secret Service: Diffie-
/// Hellman in the second Oakley group (RFC 2409, 1024-bit MODP, generator 2), the
/// shared secret left-padded to 128 bytes, HKDF-SHA-256 (no salt, empty info) to a
/// 16-byte AES key, then AES-128-CBC with PKCS#7 padding and a random IV per secret.
public enum DHSession {
    /// The RFC 2409 second Oakley group prime, big-endian.
    static let prime: [UInt8] = hex(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3"
            + "CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A89"
            + "9FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")
    /// Width of group elements and of the shared secret.
    public static let width = 128

    /// The server side of `OpenSession` with a fresh key pair.
    public static func negotiate(clientPublicKey: [UInt8]) throws(SessionCryptoError) -> (
        serverPublicKey: [UInt8], cipher: SessionCipher
    ) {
        try negotiate(clientPublicKey: clientPublicKey, pair: try DHKeyPair.generate())
    }

    /// `negotiate` with a given private key (known-answer tests).
    static func negotiate(clientPublicKey y: [UInt8], privateKey: SecretBytes) throws(SessionCryptoError) -> (
        serverPublicKey: [UInt8], cipher: SessionCipher
    ) {
        try negotiate(clientPublicKey: y, pair: try DHKeyPair(privateKey: privateKey, group: .oakley1024))
    }

    /// The server side of `OpenSession` with a key pair made beforehand (arca-secretd
    /// makes the next one while idle): the public key to return, and the session's AES key.
    static func negotiate(clientPublicKey y: [UInt8], pair: DHKeyPair) throws(SessionCryptoError) -> (
        serverPublicKey: [UInt8], cipher: SessionCipher
    ) {
        let shared = try pair.sharedSecret(with: y)
        let key = try hkdfSHA256(shared, length: 16)
        return (pair.publicKey, SessionCipher(key: key))
    }

    /// HKDF-SHA-256 (RFC 5869) with no salt (32 zero bytes) and empty info.
    static func hkdfSHA256(_ ikm: SecretBytes, length: Int) throws(SessionCryptoError) -> SecretBytes {
        guard length <= 32 else { throw .library("HKDF output longer than one block") }
        do {
            let salt = try SecretBytes(count: 32)
            let prk = try Gcrypt.hmacSHA256(key: salt, ikm)
            var one: [UInt8] = [1]
            let block = try Gcrypt.hmacSHA256(key: prk, try SecretBytes(consuming: &one))
            return try block.slice(0..<length)
        } catch let e as SessionCryptoError {
            throw e
        } catch {
            throw .library("out of secure memory")
        }
    }

    private static func hex(_ s: String) -> [UInt8] {
        let chars = Array(s.utf8)
        return stride(from: 0, to: chars.count, by: 2).map { i in
            func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 55 }
            return nibble(chars[i]) << 4 | nibble(chars[i + 1])
        }
    }
}

/// A MODP group: its prime (big-endian), generator 2.
struct DHGroup: Sendable {
    let prime: [UInt8]
    /// Bytes of a group element and of the padded shared secret.
    var width: Int { prime.count }

    /// RFC 2409's second Oakley group (1024 bits): the Secret Service's.
    static let oakley1024 = DHGroup(prime: DHSession.prime)
}

/// One side's Diffie-Hellman key pair. The private exponent is 256 bits: twice the
/// strength of these groups (NIST SP 800-56A's rule), and a quarter of the
/// exponentiation cost of a full-width exponent.
struct DHKeyPair: Sendable {
    static let privateKeyLength = 32
    let group: DHGroup
    let privateKey: SecretBytes
    /// `2^private mod p`, left-padded to the group's width.
    let publicKey: [UInt8]

    /// A fresh pair in `group`.
    static func generate(in group: DHGroup = .oakley1024) throws(SessionCryptoError) -> DHKeyPair {
        let privateKey: SecretBytes
        do {
            privateKey = try SecretBytes.random(count: privateKeyLength)
        } catch {
            throw .library("out of secure memory")
        }
        return try DHKeyPair(privateKey: privateKey, group: group)
    }

    init(privateKey: SecretBytes, group: DHGroup) throws(SessionCryptoError) {
        self.group = group
        self.privateKey = privateKey
        publicKey = try Gcrypt.powm(base: [2], exponent: privateKey, modulus: group.prime, width: group.width)
            .withUnsafeBytes { Array($0) }
    }

    /// `peer^private mod p`, left-padded to the group's width. The peer's key must be
    /// 1 to `width` bytes and between 2 and p-2.
    func sharedSecret(with y: [UInt8]) throws(SessionCryptoError) -> SecretBytes {
        guard !y.isEmpty, y.count <= group.width else {
            throw .badPublicKey("the public key is \(y.count) bytes; it must be 1 to \(group.width)")
        }
        var pMinusOne = group.prime
        pMinusOne[pMinusOne.count - 1] -= 1  // both primes end in 0xFF
        guard try Gcrypt.compare(y, [1]) > 0, try Gcrypt.compare(y, pMinusOne) < 0 else {
            throw .badPublicKey("the public key is not between 2 and p-2")
        }
        return try Gcrypt.powm(base: y, exponent: privateKey, modulus: group.prime, width: group.width)
    }
}

/// The AES-128-CBC + PKCS#7 part of a DH session.
public struct SessionCipher: Sendable {
    let key: SecretBytes

    /// Encrypts a secret for the client: a random 16-byte IV (the `parameters` of
    /// a Secret) and the padded ciphertext.
    public func encrypt(_ secret: SecretBytes) throws(SessionCryptoError) -> (iv: [UInt8], ciphertext: [UInt8]) {
        let iv = SecureRandom.bytes(count: 16)
        return (iv, try encrypt(secret, iv: iv))
    }

    func encrypt(_ secret: SecretBytes, iv: [UInt8]) throws(SessionCryptoError) -> [UInt8] {
        let pad = 16 - secret.count % 16
        var data = secret.withUnsafeBytes { Array($0) } + [UInt8](repeating: UInt8(pad), count: pad)
        try Gcrypt.aes128CBC(encrypt: true, key: key, iv: iv, &data)
        return data
    }

    /// Decrypts a secret the client sent.
    public func decrypt(iv: [UInt8], ciphertext: [UInt8]) throws(SessionCryptoError) -> SecretBytes {
        guard iv.count == 16 else { throw .badParameter("the IV is \(iv.count) bytes; it must be 16") }
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw .badParameter("the ciphertext is \(ciphertext.count) bytes, not whole 16-byte blocks")
        }
        var data = ciphertext
        defer { for i in data.indices { data[i] = 0 } }
        try Gcrypt.aes128CBC(encrypt: false, key: key, iv: iv, &data)
        let pad = Int(data[data.count - 1])
        guard (1...16).contains(pad), data.suffix(pad).allSatisfy({ $0 == UInt8(pad) }) else { throw .badPadding }
        do {
            let plainCount = data.count - pad
            return try data.withUnsafeBytes { raw in
                try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[..<plainCount]))
            }
        } catch {
            throw .library("out of secure memory")
        }
    }
}
