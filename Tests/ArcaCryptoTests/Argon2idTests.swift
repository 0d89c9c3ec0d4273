import Testing

@testable import ArcaCrypto

@Suite("Argon2id")
struct Argon2idTests {
    static let cheap = KDFParameters(opsLimit: 1, memoryLimit: 8 << 20, salt: [UInt8](repeating: 1, count: 16))

    @Test("same password and parameters give the same key; any change gives another")
    func deterministic() throws {
        let pw = try SecretBytes.testing(Array("correct horse".utf8))
        let k1 = try Argon2id.deriveKey(password: pw, parameters: Self.cheap)
        let k2 = try Argon2id.deriveKey(password: pw, parameters: Self.cheap)
        var salted = Self.cheap
        salted.salt[0] = 2
        var slower = Self.cheap
        slower.opsLimit = 2
        #expect(k1 == k2)
        #expect(k1.count == 32)
        #expect(try k1 != Argon2id.deriveKey(password: pw, parameters: salted))
        #expect(try k1 != Argon2id.deriveKey(password: pw, parameters: slower))
        #expect(
            try k1
                != Argon2id.deriveKey(
                    password: SecretBytes.testing(Array("correct horsf".utf8)), parameters: Self.cheap))
    }

    @Test("invalid parameters are refused with a clear error")
    func invalid() throws {
        let pw = try SecretBytes.testing([1])
        var p = Self.cheap
        p.salt = [1, 2, 3]
        #expect(throws: CryptoError.invalidLength(what: "Argon2id salt", expected: 16, actual: 3)) {
            try Argon2id.deriveKey(password: pw, parameters: p)
        }
        p = Self.cheap
        p.opsLimit = 0
        #expect(throws: CryptoError.invalidParameters("ops limit 0 out of range")) {
            try Argon2id.deriveKey(password: pw, parameters: p)
        }
        p = Self.cheap
        p.memoryLimit = 1024
        #expect(throws: CryptoError.invalidParameters("memory limit 1024 out of range")) {
            try Argon2id.deriveKey(password: pw, parameters: p)
        }
    }

    @Test("empty password derives a key (a PAM stack may pass one)")
    func emptyPassword() throws {
        let key = try Argon2id.deriveKey(password: try SecretBytes(count: 0), parameters: Self.cheap)
        #expect(key.count == 32)
    }

    @Test("memory ceiling: an eighth of RAM, between 64 MiB and 1 GiB")
    func ceiling() {
        #expect(Argon2id.memoryCeiling(physicalMemory: 24 << 30) == 1 << 30)
        #expect(Argon2id.memoryCeiling(physicalMemory: 2 << 30) == 256 << 20)
        #expect(Argon2id.memoryCeiling(physicalMemory: 256 << 20) == 64 << 20)
    }
}

@Suite("Argon2id calibration arithmetic")
struct CalibrationArithmeticTests {
    @Test("budget split: passes drop first below the floor, memory grows to the ceiling, then passes grow")
    func distribute() {
        #expect(Argon2id.distribute(units: 30, floorMiB: 64, ceilingMiB: 1024) == (1, 64 << 20))
        #expect(Argon2id.distribute(units: 150, floorMiB: 64, ceilingMiB: 1024) == (2, 64 << 20))
        #expect(Argon2id.distribute(units: 1200, floorMiB: 64, ceilingMiB: 1024) == (3, 400 << 20))
        #expect(Argon2id.distribute(units: 1203, floorMiB: 64, ceilingMiB: 1024) == (3, 400 << 20))
        #expect(Argon2id.distribute(units: 6144, floorMiB: 64, ceilingMiB: 1024) == (6, 1 << 30))
        // Halves round up, as rounded() did, without libm (Argon2id.nearest).
        #expect(Argon2id.distribute(units: 160, floorMiB: 64, ceilingMiB: 1024) == (3, 64 << 20))
        #expect(Argon2id.distribute(units: 96, floorMiB: 64, ceilingMiB: 1024) == (2, 64 << 20))
        #expect(Argon2id.distribute(units: 95.9, floorMiB: 64, ceilingMiB: 1024) == (1, 64 << 20))
    }

    @Test("nearest: halves up; negative, NaN and infinite timings give bounds, never a trap")
    func nearest() {
        #expect(Argon2id.nearest(2.5) == 3)
        #expect(Argon2id.nearest(2.4999) == 2)
        #expect(Argon2id.nearest(0) == 0)
        #expect(Argon2id.nearest(-7.5) == 0)
        #expect(Argon2id.nearest(.nan) == 0)
        #expect(Argon2id.nearest(.infinity) == 1_000_000_000_000_000)
    }
}

/// Wall-clock measurements: `make unit` runs this suite on its own, after the
/// parallel run, so that other tests do not share the CPU with the stopwatch.
@Suite("Argon2id calibration timing", .serialized)
struct CalibrationTimingTests {
    /// The median of three runs, so that one preemption does not decide the test.
    func median(_ params: KDFParameters) throws -> Double {
        try (0..<3).map { _ in try Argon2id.measure(params) }.sorted()[1]
    }

    @Test(
        "calibration lands within a factor of 2 of the target, with at least 64 MiB",
        arguments: [0.25, 0.5])
    func calibration(target: Double) throws {
        let params = try Argon2id.calibrate(targetSeconds: target)
        #expect(params.memoryLimit >= 64 << 20)
        #expect(params.memoryLimit <= Argon2id.memoryCeiling())
        #expect(params.salt.count == 16)
        let seconds = try median(params)
        #expect(
            seconds >= target / 2 && seconds <= target * 2,
            "measured \(seconds) s for target \(target) s with \(params)")
    }

    @Test("calibration on a small memory ceiling raises passes instead")
    func calibrationCapped() throws {
        let params = try Argon2id.calibrate(targetSeconds: 0.4, memoryCeiling: 64 << 20)
        #expect(params.memoryLimit == 64 << 20)
        #expect(params.opsLimit >= 3)
        let seconds = try median(params)
        #expect(seconds >= 0.2 && seconds <= 0.8, "measured \(seconds) s with \(params)")
    }
}
