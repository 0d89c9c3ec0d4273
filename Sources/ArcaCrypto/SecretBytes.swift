import Synchronization

/// Bytes that must stay secret: a password, a derived key, an item's secret.
///
/// The storage is locked into RAM (never swapped), kept out of core dumps, and
/// zeroed over its full capacity when the value is wiped or deinitialised. Secrets
/// up to 4 KiB take a slot of a pool of such memory (allocation is then as cheap
/// as reading a key from the kernel); larger ones come from libsodium's guarded
/// allocator (`sodium_malloc`), fenced by guard pages. Equality is constant
/// time, `description` never shows the bytes, and there is deliberately no
/// conversion to `String` or `Data`: code that needs the bytes borrows them with
/// `withUnsafeBytes` for the duration of one call.
// @unchecked: holds a raw pointer it alone owns; immutable after init except `wipe()` (see below).
public final class SecretBytes: @unchecked Sendable {
    // The allocation is owned by this object and never shared; the class is not
    // mutated after initialisation except by `wipe()`, which is documented as
    // not thread-safe against concurrent readers.
    // @usableFromInline: the two `with…Bytes` below are inlined into their callers.
    @usableFromInline let storage: UnsafeMutableRawPointer
    /// The number of secret bytes.
    public let count: Int
    /// The bytes zeroed on wipe: the whole pool slot, or `count` for sodium_malloc.
    private let capacity: Int
    private let pooled: Bool

    /// Called with the storage after it was zeroed and before it is freed, so that a
    /// test can read the memory back. Tests only.
    static let afterWipeForTesting = Mutex<(@Sendable (UnsafeRawBufferPointer) -> Void)?>(nil)

    /// Allocates `count` zero bytes.
    public init(count: Int) throws {
        precondition(count >= 0, "SecretBytes count must not be negative")
        self.count = count
        if let slot = SecurePool.allocate(count), let size = SecurePool.slotSize(for: count) {
            storage = slot
            capacity = size
            pooled = true
        } else {
            guard let pointer = Sodium.secureAllocate(count) else { throw CryptoError.outOfSecureMemory }
            storage = pointer
            capacity = count
            pooled = false
        }
        Sodium.zero(UnsafeMutableRawBufferPointer(start: storage, count: capacity))
    }

    /// Allocates `count` bytes and lets `body` fill them. If `body` throws, the
    /// bytes are wiped and the error is rethrown.
    public convenience init(
        count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        try self.init(count: count)
        do {
            try body(UnsafeMutableRawBufferPointer(start: storage, count: count))
        } catch {
            wipe()
            throw error
        }
    }

    /// Copies `bytes` into secure storage. The caller remains responsible for
    /// wiping its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(count: bytes.count) { buffer in
            if bytes.count > 0 { buffer.copyMemory(from: bytes) }
        }
    }

    /// Copies `bytes` into secure storage and zeroes the array in place, so that the
    /// only copy left is the guarded one.
    public convenience init(consuming bytes: inout [UInt8]) throws {
        defer { bytes.withUnsafeMutableBytes { Sodium.zero($0) } }
        try self.init(count: bytes.count) { buffer in
            bytes.withUnsafeBytes { if $0.count > 0 { buffer.copyMemory(from: $0) } }
        }
    }

    /// `count` bytes from the kernel's CSPRNG.
    public static func random(count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { Sodium.randomFill($0) }
    }

    deinit {
        wipe()
        if let observe = Self.afterWipeForTesting.withLock({ $0 }) {
            observe(UnsafeRawBufferPointer(start: storage, count: capacity))
        }
        if pooled {
            SecurePool.release(storage, count: count)
        } else {
            Sodium.secureFree(storage)
        }
    }

    /// Borrows the secret bytes for the duration of `body`. Do not let the pointer escape.
    /// Throws what `body` throws, with its type: a caller whose body throws one error
    /// type gets that type back without wrapping it in a `Result`.
    /// Inlinable, so specialized in the caller: an unspecialized call builds the metadata
    /// of `R` at run time by its mangled name (about 20,000 instructions for `[UInt8]`
    /// the first time in a process: a fresh login's open_session, bench/pam/callgrind.sh).
    @inlinable
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        // Inlined, the last use of `self` would be the load of `storage`: keep the object (whose
        // deinit wipes and frees the bytes) alive until `body` has returned.
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// Borrows the secret bytes mutably for the duration of `body`; throws what `body` throws.
    /// Inlinable, as ``withUnsafeBytes(_:)``.
    @inlinable
    public func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E)
        -> R
    {
        defer { withExtendedLifetime(self) {} }  // as in withUnsafeBytes
        return try body(UnsafeMutableRawBufferPointer(start: storage, count: count))
    }

    /// Zeroes the bytes now, over the full capacity. The value stays usable and
    /// reads as zeros afterwards.
    public func wipe() {
        Sodium.zero(UnsafeMutableRawBufferPointer(start: storage, count: capacity))
    }

    /// A copy in new secure storage.
    public func copy() throws -> SecretBytes {
        try withUnsafeBytes { try SecretBytes(copying: $0) }
    }

    /// The bytes `range` of this secret, copied into new secure storage.
    public func slice(_ range: Range<Int>) throws -> SecretBytes {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "slice out of bounds")
        return try withUnsafeBytes { try SecretBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}

extension SecretBytes: Equatable {
    /// Constant-time comparison: the time taken depends only on the lengths.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Redacted: shows the length, never the bytes.
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    /// Redacted: shows the length, never the bytes.
    public var debugDescription: String { description }
}
