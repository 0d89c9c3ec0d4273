import ArcaCrypto
import CArcaGcrypt
import CGcrypt

/// The libgcrypt calls of the Secret Service session algorithm
/// (`dh-ietf1024-sha256-aes128-cbc-pkcs7`): big-number arithmetic, AES-128-CBC and
/// HMAC-SHA-256. Only this file touches libgcrypt's pointers.
enum Gcrypt {
    /// Initialises the library once; false if it is older than the headers.
    static let ready: Bool = arca_gcry_initialize() == 0

    /// `base^exponent mod modulus`, all big-endian unsigned, the result left-padded
    /// to `width` bytes. The corresponding C function is `gcry_mpi_powm`.
    static func powm(base: [UInt8], exponent: SecretBytes, modulus: [UInt8], width: Int) throws(SessionCryptoError)
        -> SecretBytes
    {
        guard ready else { throw .library("libgcrypt is older than the headers Arca was built with") }
        let b = try mpi(base)
        defer { gcry_mpi_release(b) }
        // Scanned from the SecretBytes without a Swift copy; libgcrypt's MPI holds the exponent in its
        // ordinary (not mlocked) heap while the exponentiation runs and wipes it when released.
        guard let e = exponent.withUnsafeBytes({ scan($0) }) else { throw .library("gcry_mpi_scan failed") }
        defer { gcry_mpi_release(e) }
        let m = try mpi(modulus)
        defer { gcry_mpi_release(m) }
        guard let r = gcry_mpi_new(0) else { throw .library("gcry_mpi_new failed") }
        defer { gcry_mpi_release(r) }
        gcry_mpi_powm(r, b, e, m)
        var written = 0
        var out = [UInt8](repeating: 0, count: width)
        let rc = out.withUnsafeMutableBytes { raw in
            gcry_mpi_print(GCRYMPI_FMT_USG, raw.baseAddress?.assumingMemoryBound(to: UInt8.self), width, &written, r)
        }
        guard rc == 0, written <= width else { throw .library("gcry_mpi_print failed") }
        // Left-pad: a shared secret with leading zero bytes keeps its full width.
        var padded = [UInt8](repeating: 0, count: width - written) + out.prefix(written)
        for i in out.indices { out[i] = 0 }
        do {
            return try SecretBytes(consuming: &padded)
        } catch {
            throw .library("out of secure memory")
        }
    }

    /// Compares two big-endian unsigned numbers: -1, 0 or 1. The corresponding C function is `gcry_mpi_cmp`.
    static func compare(_ a: [UInt8], _ b: [UInt8]) throws(SessionCryptoError) -> Int {
        guard ready else { throw .library("libgcrypt is older than the headers Arca was built with") }
        let x = try mpi(a)
        defer { gcry_mpi_release(x) }
        let y = try mpi(b)
        defer { gcry_mpi_release(y) }
        return Int(gcry_mpi_cmp(x, y).signum())
    }

    private static func mpi(_ bytes: [UInt8]) throws(SessionCryptoError) -> gcry_mpi_t {
        guard let result = bytes.withUnsafeBytes({ scan($0) }) else { throw .library("gcry_mpi_scan failed") }
        return result
    }

    private static func scan(_ raw: UnsafeRawBufferPointer) -> gcry_mpi_t? {
        var result: gcry_mpi_t?
        guard gcry_mpi_scan(&result, GCRYMPI_FMT_USG, raw.baseAddress, raw.count, nil) == 0 else { return nil }
        return result
    }

    /// AES-128-CBC over whole blocks. The corresponding C functions are
    /// `gcry_cipher_open`, `gcry_cipher_setkey`, `gcry_cipher_setiv`, `gcry_cipher_encrypt`/`decrypt`.
    static func aes128CBC(encrypt: Bool, key: SecretBytes, iv: [UInt8], _ data: inout [UInt8])
        throws(SessionCryptoError)
    {
        guard ready else { throw .library("libgcrypt is older than the headers Arca was built with") }
        var handle: gcry_cipher_hd_t?
        guard
            gcry_cipher_open(&handle, Int32(GCRY_CIPHER_AES.rawValue), Int32(GCRY_CIPHER_MODE_CBC.rawValue), 0)
                == 0, let handle
        else { throw .library("gcry_cipher_open failed") }
        defer { gcry_cipher_close(handle) }
        let keyed = key.withUnsafeBytes { gcry_cipher_setkey(handle, $0.baseAddress, $0.count) }
        let ivSet = iv.withUnsafeBytes { gcry_cipher_setiv(handle, $0.baseAddress, $0.count) }
        guard keyed == 0, ivSet == 0 else { throw .library("cannot set the AES key or IV") }
        let count = data.count
        let rc = data.withUnsafeMutableBytes { raw in
            encrypt
                ? gcry_cipher_encrypt(handle, raw.baseAddress, count, nil, 0)
                : gcry_cipher_decrypt(handle, raw.baseAddress, count, nil, 0)
        }
        guard rc == 0 else { throw .library("AES-CBC failed") }
    }

    /// HMAC-SHA-256 of `message` under `key`. The corresponding C functions are
    /// `gcry_md_open` (with `GCRY_MD_FLAG_HMAC`), `gcry_md_setkey`, `gcry_md_write`, `gcry_md_read`.
    static func hmacSHA256(key: SecretBytes, _ message: SecretBytes) throws(SessionCryptoError) -> SecretBytes {
        guard ready else { throw .library("libgcrypt is older than the headers Arca was built with") }
        var handle: gcry_md_hd_t?
        guard gcry_md_open(&handle, Int32(GCRY_MD_SHA256.rawValue), UInt32(GCRY_MD_FLAG_HMAC.rawValue)) == 0,
            let handle
        else { throw .library("gcry_md_open failed") }
        defer { gcry_md_close(handle) }
        guard key.withUnsafeBytes({ gcry_md_setkey(handle, $0.baseAddress, $0.count) }) == 0 else {
            throw .library("gcry_md_setkey failed")
        }
        message.withUnsafeBytes { gcry_md_write(handle, $0.baseAddress, $0.count) }
        guard let digest = gcry_md_read(handle, Int32(GCRY_MD_SHA256.rawValue)) else {
            throw .library("gcry_md_read failed")
        }
        do {
            return try SecretBytes(copying: UnsafeRawBufferPointer(start: digest, count: 32))
        } catch {
            throw .library("out of secure memory")
        }
    }
}
