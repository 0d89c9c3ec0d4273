// Helper modes of bench-arcad for bench/pam, which measures pam_arca against the
// real arcad and needs two things no other executable does (bench targets cannot
// add executables without touching Package.swift):
//
//   bench-arcad --enroll SOCKET UID OPS MEMORY   enroll UID with these Argon2id
//       parameters and a random salt; the password is read from stdin (one
//       trailing newline dropped), derived exactly as pam_arca derives it.
//   bench-arcad --kdf SOCKET UID RUNS            fetch UID's KDF parameters from
//       arcad, time RUNS Argon2id.deriveKey with them (a random 8-byte password:
//       the time does not depend on it) and print
//       "ops OPS memory BYTES median_us M p10_us A p90_us B".
//   bench-arcad --pam-pairs SERVICE USER COUNT [SOCKET UID]   see PAMPairs.swift.
//   bench-arcad --purge UID                      clear what arcad left in UID's
//       kernel keyrings (KeyringLayout.purge), as bench-arcad does for its users.
import ArcaClient
import ArcaCrypto
import ArcaKeyring
import ArcaProtocol
import Foundation

/// Runs a helper mode when the first argument names one; otherwise returns.
func runHelperModeIfAsked() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch arguments.first {
    case "--enroll": helperEnroll(Array(arguments.dropFirst()))
    case "--kdf": helperKDF(Array(arguments.dropFirst()))
    case "--pam-pairs": pamPairsMain(Array(arguments.dropFirst()))
    case "--purge":
        guard arguments.count == 2, let uid = UInt32(arguments[1]) else { helperFail("usage: bench-arcad --purge UID") }
        let report = KeyringLayout().purge(user: uid)
        guard report.isComplete else { helperFail("purge incomplete: \(report.failures)") }
        exit(0)
    default: return
    }
}

private func helperFail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench-arcad: \(message)\n".utf8))
    exit(2)
}

private func helperEnroll(_ arguments: [String]) -> Never {
    guard arguments.count == 4, let uid = UInt32(arguments[1]), let ops = UInt64(arguments[2]),
        let memory = Int(arguments[3])
    else { helperFail("usage: bench-arcad --enroll SOCKET UID OPS MEMORY (password on stdin)") }
    var input = [UInt8](FileHandle.standardInput.readDataToEndOfFile())
    if input.last == 0x0A { input.removeLast() }
    do {
        let password = try SecretBytes(consuming: &input)
        let salt = SecureRandom.bytes(count: KDFParameters.saltLength)
        let kdf = KDFParameters(opsLimit: ops, memoryLimit: memory, salt: salt)
        let key = try Argon2id.deriveKey(password: password, parameters: kdf).withUnsafeBytes { Array($0) }
        let wire = KeyDerivationParameters(opsLimit: ops, memoryLimit: UInt64(memory), salt: salt)
        let reply = try ArcadClient(path: arguments[0], timeoutMilliseconds: 30_000)
            .send(.enroll(uid: uid, key: key, parameters: wire))
        guard case .ok = reply else { helperFail("enroll: arcad answered \(reply)") }
        exit(0)
    } catch {
        helperFail("enroll: \(error)")
    }
}

private func helperKDF(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let uid = UInt32(arguments[1]), let runs = Int(arguments[2]), runs > 0 else {
        helperFail("usage: bench-arcad --kdf SOCKET UID RUNS")
    }
    do {
        let reply = try ArcadClient(path: arguments[0], timeoutMilliseconds: 30_000).send(.kdfParameters(uid: uid))
        guard case .kdfParameters(let wire?) = reply else { helperFail("kdf: arcad answered \(reply)") }
        let parameters = KDFParameters(
            opsLimit: wire.opsLimit, memoryLimit: Int(wire.memoryLimit), salt: wire.salt)
        try parameters.validate()
        var samples: [Double] = []
        for _ in 0..<runs {
            let password = try SecretBytes.random(count: 8)
            let start = Clock.monotonicSeconds()
            _ = try Argon2id.deriveKey(password: password, parameters: parameters)
            samples.append(Clock.monotonicSeconds() - start)
        }
        samples.sort()
        func us(_ q: Double) -> Int { Int((samples[min(runs - 1, Int(Double(runs) * q))] * 1e6).rounded()) }
        print(
            "ops \(wire.opsLimit) memory \(wire.memoryLimit) median_us \(us(0.5)) p10_us \(us(0.1)) p90_us \(us(0.9))")
        exit(0)
    } catch {
        helperFail("kdf: \(error)")
    }
}
