import ArcaSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Argon2id (v1.3, parallelism 1) parameters. They are stored in a vault's header
/// so that the same password yields the same key on every unlock.
public struct KDFParameters: Sendable, Equatable, Hashable {
    /// Number of passes over memory (Argon2 `t`).
    public var opsLimit: UInt64
    /// Memory in bytes (Argon2 `m` × 1024).
    public var memoryLimit: Int
    /// 16 random bytes, unique per vault.
    public var salt: [UInt8]

    /// The smallest memory Arca ever calibrates to: 64 MiB.
    public static let memoryFloor = 64 << 20
    /// Salt length required by Argon2id in libsodium.
    public static let saltLength = 16

    public init(opsLimit: UInt64, memoryLimit: Int, salt: [UInt8]) {
        self.opsLimit = opsLimit
        self.memoryLimit = memoryLimit
        self.salt = salt
    }

    /// Checks the parameters against libsodium's limits.
    public func validate() throws {
        guard salt.count == Self.saltLength else {
            throw CryptoError.invalidLength(what: "Argon2id salt", expected: Self.saltLength, actual: salt.count)
        }
        guard opsLimit >= Sodium.argon2idOpsLimitMin, opsLimit <= 1 << 20 else {
            throw CryptoError.invalidParameters("ops limit \(opsLimit) out of range")
        }
        guard memoryLimit >= Sodium.argon2idMemLimitMin, memoryLimit <= Sodium.argon2idMemLimitMax else {
            throw CryptoError.invalidParameters("memory limit \(memoryLimit) out of range")
        }
    }
}

/// Password-based key derivation with Argon2id, and calibration of its cost.
public enum Argon2id {
    /// Length of the keys Arca derives from passwords.
    public static let keyLength = 32

    /// Derives a `length`-byte key from `password` with `parameters`.
    public static func deriveKey(
        password: SecretBytes, parameters: KDFParameters, length: Int = keyLength
    ) throws -> SecretBytes {
        try Sodium.ensureReady()
        try parameters.validate()
        return try SecretBytes(count: length) { output in
            let ok = password.withUnsafeBytes { pw in
                parameters.salt.withUnsafeBytes { salt in
                    Sodium.argon2id(
                        output: output, password: pw, salt: salt,
                        opsLimit: parameters.opsLimit, memLimit: parameters.memoryLimit)
                }
            }
            guard ok else { throw CryptoError.keyDerivationFailed }
        }
    }

    /// The largest memory calibration may choose: an eighth of physical RAM, at most
    /// 1 GiB, never below the 64 MiB floor. Several logins may derive at once, so a
    /// single derivation must leave most of the machine free.
    public static func memoryCeiling(physicalMemory: Int = Argon2id.physicalMemory()) -> Int {
        max(KDFParameters.memoryFloor, min(1 << 30, physicalMemory / 8))
    }

    /// Physical RAM in bytes, from `sysconf`.
    public static func physicalMemory() -> Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let size = sysconf(Int32(_SC_PAGESIZE))
        return pages > 0 && size > 0 ? pages * size : KDFParameters.memoryFloor * 8
    }

    /// Chooses parameters that take about `targetSeconds` on this machine.
    ///
    /// Memory is the main cost an attacker pays, so it grows first (from the 64 MiB
    /// floor up to `memoryCeiling`) with 3 passes, as RFC 9106 recommends; only when
    /// memory is capped do the passes grow. On a slow machine the passes drop to 1
    /// but memory never goes under the floor. A fresh random salt is included.
    public static func calibrate(
        targetSeconds: Double = 0.25, memoryFloor: Int = KDFParameters.memoryFloor,
        memoryCeiling ceiling: Int = Argon2id.memoryCeiling()
    ) throws -> KDFParameters {
        let floorMiB = max(1, memoryFloor >> 20)
        let ceilingMiB = max(floorMiB, ceiling >> 20)
        var params = KDFParameters(
            opsLimit: 3, memoryLimit: floorMiB << 20, salt: SecureRandom.bytes(count: KDFParameters.saltLength))
        // Argon2 time is close to linear in passes × memory, but caches and page
        // faults bend the line, so the estimate is measured and corrected twice.
        for _ in 0..<3 {
            let seconds = try measure(params)
            let ratio = targetSeconds / seconds
            if ratio > 0.85 && ratio < 1.18 { break }
            let units = Double(params.opsLimit) * Double(params.memoryLimit >> 20) * ratio
            (params.opsLimit, params.memoryLimit) = distribute(units: units, floorMiB: floorMiB, ceilingMiB: ceilingMiB)
        }
        return params
    }

    /// Splits a budget of passes × MiB: memory first (3 passes, floor…ceiling),
    /// then more passes once memory is capped, or fewer passes (down to 1) when
    /// even the floor with 3 passes is too slow.
    static func distribute(units: Double, floorMiB: Int, ceilingMiB: Int) -> (UInt64, Int) {
        let atFloor = units / Double(floorMiB)
        if atFloor < 3 {
            return (max(1, nearest(atFloor)), floorMiB << 20)
        }
        let mib = min(Double(ceilingMiB), units / 3)
        let wholeMiB = max(floorMiB, (Int(mib) >> 2) << 2)  // multiples of 4 MiB
        return (max(3, nearest(units / Double(wholeMiB))), wholeMiB << 20)
    }

    /// `value` to the nearest integer, halves up, by truncation, within 0...1e15 (a negative
    /// value or NaN gives 0, never a trap): not `rounded()`, which calls libm's `round`, and
    /// pam_arca.so's enrollment (a user's first login) runs this, in a module that carries no
    /// libm (Sources/PAMShim/libm.c; Tests/integration/01 checks no Arca code calls libm).
    static func nearest(_ value: Double) -> UInt64 {
        UInt64(min(max(0, value), 1e15) + 0.5)
    }

    /// Wall-clock seconds one derivation with `parameters` takes here.
    public static func measure(_ parameters: KDFParameters) throws -> Double {
        let password = try SecretBytes.random(count: 16)
        let start = Clock.monotonicSeconds()
        _ = try deriveKey(password: password, parameters: parameters)
        return Clock.monotonicSeconds() - start
    }
}

/// A monotonic clock for calibration and benchmarks: ArcaSystem's ``MonotonicClock``, in seconds.
public enum Clock {
    /// Seconds from an arbitrary origin: ``MonotonicClock/seconds()``.
    public static func monotonicSeconds() -> Double { MonotonicClock.seconds() }
}
