import ArcaCrypto

/// gcr's secret exchange, protocol `sx-aes-1` (gcr-secret-exchange.c), which the
/// system prompter uses to hand back the password it asked for: Diffie-Hellman in
/// the 1536-bit MODP group of RFC 3526 (generator 2), the shared secret left-padded
/// to 192 bytes, HKDF-SHA-256 (no salt, empty info) to a 16-byte key, AES-128-CBC
/// with PKCS#7 and a random IV. Messages are key files:
///
///     [sx-aes-1]
///     public=<base64 of the sender's public key>
///     secret=<base64 of the ciphertext>      (only when a secret is sent)
///     iv=<base64 of the 16-byte IV>          (idem)
struct SecretExchange {
    static let protocolName = "sx-aes-1"
    let pair: DHKeyPair

    /// A side with a fresh key pair.
    static func start() throws(SessionCryptoError) -> SecretExchange {
        SecretExchange(pair: try DHKeyPair.generate(in: .modp1536))
    }

    /// Our public key, as the first message (or a reply without a secret).
    var message: String { "[\(Self.protocolName)]\npublic=\(Base64.encode(pair.publicKey))\n" }

    /// The secret in the other side's message, decrypted with the key agreed with
    /// its public key. A message without a secret → nil.
    func receive(_ text: String) throws(SessionCryptoError) -> SecretBytes? {
        let fields = try Self.parse(text)
        guard let peer = fields["public"].flatMap(Base64.decode) else {
            throw .badParameter("the exchange has no valid public key")
        }
        guard let sealed = fields["secret"] else { return nil }
        guard let ciphertext = Base64.decode(sealed), let iv = fields["iv"].flatMap(Base64.decode) else {
            throw .badParameter("the exchange's secret or iv is not base64")
        }
        let key = try DHSession.hkdfSHA256(try pair.sharedSecret(with: peer), length: 16)
        return try SessionCipher(key: key).decrypt(iv: iv, ciphertext: ciphertext)
    }

    /// `name=value` lines of the `[sx-aes-1]` group (blank lines and `#` comments skipped).
    static func parse(_ text: String) throws(SessionCryptoError) -> [String: String] {
        var fields: [String: String] = [:]
        var inGroup = false
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = raw.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                inGroup = line == "[\(protocolName)]"
                continue
            }
            guard inGroup, let equals = line.firstIndex(of: "=") else { continue }
            fields[String(line[..<equals]).trimmingSpaces] = String(line[line.index(after: equals)...]).trimmingSpaces
        }
        guard inGroup || !fields.isEmpty else { throw .badParameter("not an \(protocolName) exchange") }
        return fields
    }
}

extension DHGroup {
    /// RFC 3526's 1536-bit MODP group (gcr's `ietf-ike-grp-modp-1536`).
    static let modp1536 = DHGroup(
        prime: Base16.decode(
            "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3"
                + "CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899F"
                + "A5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF0598DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F3"
                + "56208552BB9ED529077096966D670C354E4ABC9804F1746C08CA237327FFFFFFFFFFFFFFFF"))
}

/// Upper-case hex to bytes (constants only).
enum Base16 {
    static func decode(_ s: String) -> [UInt8] {
        let chars = Array(s.utf8)
        return stride(from: 0, to: chars.count - 1, by: 2).map { i in
            func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 55 }
            return nibble(chars[i]) << 4 | nibble(chars[i + 1])
        }
    }
}

/// Standard base64 (RFC 4648, padded), as GLib writes it.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// nil for anything but padded standard base64.
    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            var n: UInt32 = 0
            var pad = 0
            for j in 0..<4 {
                let c = chars[i + j]
                if c == UInt8(ascii: "="), i + 4 == chars.count, j >= 2 {
                    pad += 1
                    n <<= 6
                    continue
                }
                guard pad == 0, let v = alphabet.firstIndex(of: c) else { return nil }
                n = n << 6 | UInt32(v)
            }
            out.append(UInt8(n >> 16 & 255))
            if pad < 2 { out.append(UInt8(n >> 8 & 255)) }
            if pad < 1 { out.append(UInt8(n & 255)) }
            i += 4
        }
        return out
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        String(
            drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed()
                .drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
