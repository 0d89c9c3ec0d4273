// bench-kdf: what turning a login password into a key costs Arca, beside what
// other Linux secret stores do, and what it costs an attacker per guess.
//
//   swift run -c release bench-kdf
//
// Peers are re-implemented over libsodium with the parameters those projects use:
// gnome-keyring's login keyring (iterated SHA-256, 1,000-4,000 rounds), KWallet
// (PBKDF2-HMAC-SHA-512, 50,000 iterations), systemd-homed (Argon2id, 64 MiB, about
// 500 ms). Times are medians of several runs on this machine.
import ArcaCrypto
import CSodium
import Glibc

func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = Clock.monotonicSeconds()
        try body()
        samples.append(Clock.monotonicSeconds() - start)
    }
    return samples.sorted()[samples.count / 2]
}

func maxRSSKiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss
}

/// gnome-keyring: egg_symkey_generate_simple, SHA-256 over (previous digest ‖ password ‖ salt), N rounds.
func iteratedSHA256(password: [UInt8], salt: [UInt8], rounds: Int) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    for round in 0..<rounds {
        var state = crypto_hash_sha256_state()
        crypto_hash_sha256_init(&state)
        if round > 0 { crypto_hash_sha256_update(&state, digest, 32) }
        crypto_hash_sha256_update(&state, password, UInt64(password.count))
        crypto_hash_sha256_update(&state, salt, UInt64(salt.count))
        crypto_hash_sha256_final(&state, &digest)
    }
    return digest
}

/// KWallet: PBKDF2-HMAC-SHA-512, first 64-byte block.
func pbkdf2SHA512(password: [UInt8], salt: [UInt8], iterations: Int) -> [UInt8] {
    func hmac(_ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 64)
        var state = crypto_auth_hmacsha512_state()
        crypto_auth_hmacsha512_init(&state, password, password.count)
        crypto_auth_hmacsha512_update(&state, message, UInt64(message.count))
        crypto_auth_hmacsha512_final(&state, &out)
        return out
    }
    var u = hmac(salt + [0, 0, 0, 1])
    var t = u
    for _ in 1..<iterations {
        u = hmac(u)
        for i in 0..<64 { t[i] ^= u[i] }
    }
    return t
}

guard sodium_init() >= 0 else { fatalError("libsodium unavailable") }
// Self-check the PBKDF2 peer against a known value (Python hashlib, 2 iterations).
let check = pbkdf2SHA512(password: Array("password".utf8), salt: Array("salt".utf8), iterations: 2)
let expected = "e1d9c16aa681708a45f5c7c4e215ceb66e011a2e9f0040713f18aefdb866d53c"
guard
    check.prefix(32).map({ String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) })
        .joined() == expected
else { fatalError("PBKDF2 peer self-check failed") }

let password = Array("correct horse battery staple".utf8)
let salt = SecureRandom.bytes(count: 16)
let secret = try password.withUnsafeBytes { try SecretBytes(copying: $0) }

struct Row {
    let name: String
    let params: String
    let seconds: Double
    let memory: Int
}
var rows: [Row] = []

for rounds in [1_000, 4_000] {
    let t = median(15) { _ = iteratedSHA256(password: password, salt: salt, rounds: rounds) }
    rows.append(Row(name: "gnome-keyring", params: "SHA-256 x \(rounds)", seconds: t, memory: 0))
}
let tk = median(7) { _ = pbkdf2SHA512(password: password, salt: salt, iterations: 50_000) }
rows.append(Row(name: "KWallet", params: "PBKDF2-SHA512 x 50000", seconds: tk, memory: 0))

let homed = try Argon2id.calibrate(targetSeconds: 0.5, memoryCeiling: 64 << 20)
let th = try median(5) { _ = try Argon2id.deriveKey(password: secret, parameters: homed) }
rows.append(
    Row(
        name: "systemd-homed", params: "Argon2id t=\(homed.opsLimit) m=64 MiB", seconds: th,
        memory: homed.memoryLimit))

let calibrationStart = Clock.monotonicSeconds()
let arca = try Argon2id.calibrate()
let calibrationTime = Clock.monotonicSeconds() - calibrationStart
let ta = try median(5) { _ = try Argon2id.deriveKey(password: secret, parameters: arca) }
rows.append(
    Row(
        name: "Arca (default)", params: "Argon2id t=\(arca.opsLimit) m=\(arca.memoryLimit >> 20) MiB",
        seconds: ta, memory: arca.memoryLimit))

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func fmt(_ x: Double, _ digits: Int = 1) -> String {
    var s = String(Int((x * pow(10, Double(digits))).rounded()))
    while s.count <= digits { s = "0" + s }
    return digits == 0 ? s : String(s.dropLast(digits)) + "." + String(s.suffix(digits))
}

let gpuMemory = 24 << 30  // a 24 GiB GPU: how many guesses fit in memory at once
print(
    "Password -> key, one guess, on this machine (\(Argon2id.physicalMemory() >> 30) GiB RAM; Arca's calibration took \(fmt(calibrationTime, 2)) s)"
)
print(
    pad("store", 16) + pad("derivation", 28) + pad("time/guess", 13) + pad("memory/guess", 14)
        + pad("guesses/s/core", 16) + pad("Arca cost x", 13) + "parallel guesses in 24 GiB")
for r in rows {
    let perSecond = 1 / r.seconds
    let ratio = ta / r.seconds
    let parallel = r.memory == 0 ? "unbounded (memoryless)" : String(gpuMemory / r.memory)
    print(
        pad(r.name, 16) + pad(r.params, 28) + pad(fmt(r.seconds * 1000, 2) + " ms", 13)
            + pad(r.memory == 0 ? "< 1 KiB" : "\(r.memory >> 20) MiB", 14)
            + pad(fmt(perSecond, 0), 16) + pad(fmt(ratio, 1), 13) + parallel)
}
print("'Arca cost x' = Arca's CPU time per guess / the store's; memory-hardness multiplies it again on GPUs and ASICs.")
print("peak RSS of this run: \(maxRSSKiB() >> 10) MiB (Argon2id memory is allocated per derivation)")
