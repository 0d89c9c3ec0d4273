/// Errors of the crypto layer. None of them carries secret material.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// libsodium could not be initialised (no entropy source).
    case libraryUnavailable
    /// The guarded allocator failed: RLIMIT_MEMLOCK or memory exhausted.
    case outOfSecureMemory
    /// A sealed box did not verify: wrong key, wrong associated data, or the bytes were changed.
    case authenticationFailed
    /// A key, nonce, salt or box had the wrong length.
    case invalidLength(what: String, expected: Int, actual: Int)
    /// Argon2id parameters outside what libsodium accepts.
    case invalidParameters(String)
    /// Argon2id could not allocate its memory.
    case keyDerivationFailed

    public var description: String {
        switch self {
        case .libraryUnavailable: "libsodium could not be initialised"
        case .outOfSecureMemory: "cannot allocate locked memory for a secret (check RLIMIT_MEMLOCK)"
        case .authenticationFailed: "authentication failed: wrong key or the data was altered"
        case .invalidLength(let what, let expected, let actual):
            "\(what) must be \(expected) bytes, got \(actual)"
        case .invalidParameters(let why): "invalid key-derivation parameters: \(why)"
        case .keyDerivationFailed: "Argon2id failed (not enough memory for the chosen memory limit?)"
        }
    }
}
