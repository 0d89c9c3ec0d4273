// bench-arcad --pam-pairs SERVICE USER COUNT [SOCKET UID]: for bench/pam, COUNT
// login transactions (pam_start, auth, open_session, close_session, pam_end), each
// step timed; with SOCKET and UID, each transaction is paired with one
// Argon2id.deriveKey on that vault's parameters (fetched from arcad), in turn
// before and after it, so that load from elsewhere falls on both halves of a pair
// alike and the KDF can be subtracted pair by pair. Run under pam_wrapper
// (LD_PRELOAD=libpam_wrapper.so); libpam is opened with dlopen so this target
// needs no PAM dependency. Prints one line of "key value" pairs, times in µs:
//   txn (median transaction), kdf (median KDF alone), diff / diff_p10 / diff_p90
//   (transaction − KDF, pair by pair), auth (median auth step), rest (median of
//   everything but the auth step: start, open, close, end; no KDF in it), open and
//   close (medians of those steps alone).
import ArcaClient
import ArcaCrypto
import ArcaProtocol
import Foundation

/// `struct pam_conv`: a conversation that answers nothing (the stack supplies the password).
private struct PAMConversation {
    var conv: (@convention(c) (Int32, UnsafeRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32)?
    var appdata: UnsafeMutableRawPointer?
}

private typealias PAMStart =
    @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32
private typealias PAMStep = @convention(c) (OpaquePointer?, Int32) -> Int32

func pamPairsMain(_ arguments: [String]) -> Never {
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("bench-arcad --pam-pairs: \(message)\n".utf8))
        exit(2)
    }
    guard arguments.count == 3 || arguments.count == 5, let count = Int(arguments[2]), count > 0 else {
        fail("usage: bench-arcad --pam-pairs SERVICE USER COUNT [SOCKET UID]")
    }
    var kdf: KDFParameters?
    if arguments.count == 5 {
        guard let uid = UInt32(arguments[4]) else { fail("bad uid") }
        guard
            let reply = try? ArcadClient(path: arguments[3], timeoutMilliseconds: 30_000).send(
                .kdfParameters(uid: uid)),
            case .kdfParameters(let wire?) = reply
        else { fail("no KDF parameters from arcad for \(uid)") }
        kdf = KDFParameters(opsLimit: wire.opsLimit, memoryLimit: Int(wire.memoryLimit), salt: wire.salt)
    }
    guard dlopen("libpam.so.0", RTLD_NOW | RTLD_GLOBAL) != nil,
        let startSymbol = dlsym(nil, "pam_start"), let endSymbol = dlsym(nil, "pam_end"),
        let authSymbol = dlsym(nil, "pam_authenticate"), let openSymbol = dlsym(nil, "pam_open_session"),
        let closeSymbol = dlsym(nil, "pam_close_session")
    else { fail("cannot load libpam") }
    let start = unsafeBitCast(startSymbol, to: PAMStart.self)
    let end = unsafeBitCast(endSymbol, to: PAMStep.self)
    let authenticate = unsafeBitCast(authSymbol, to: PAMStep.self)
    let open = unsafeBitCast(openSymbol, to: PAMStep.self)
    let close = unsafeBitCast(closeSymbol, to: PAMStep.self)
    var conversation = PAMConversation(conv: { _, _, _, _ in 19 }, appdata: nil)  // 19: PAM_CONV_ERR

    func derive() -> Double {
        guard let kdf else { return 0 }
        do {
            let password = try SecretBytes.random(count: 8)
            let t0 = Clock.monotonicSeconds()
            _ = try Argon2id.deriveKey(password: password, parameters: kdf)
            return Clock.monotonicSeconds() - t0
        } catch {
            fail("KDF: \(error)")
        }
    }
    var txn: [Double] = []
    var kdfs: [Double] = []
    var diffs: [Double] = []
    var auths: [Double] = []
    var rests: [Double] = []
    var opens: [Double] = []
    var closes: [Double] = []
    for i in 0..<(count + 1) {  // the first pair warms up and is dropped
        let before = i % 2 == 0 ? derive() : 0
        var handle: OpaquePointer?
        let t0 = Clock.monotonicSeconds()
        let started = withUnsafePointer(to: &conversation) { start(arguments[0], arguments[1], $0, &handle) }
        guard started == 0 else { fail("pam_start \(started)") }
        let t1 = Clock.monotonicSeconds()
        let a = authenticate(handle, 0)
        let t2 = Clock.monotonicSeconds()
        let o = open(handle, 0)
        let tOpen = Clock.monotonicSeconds()
        let c = close(handle, 0)
        let tClose = Clock.monotonicSeconds()
        _ = end(handle, 0)
        let t3 = Clock.monotonicSeconds()
        guard a == 0, o == 0, c == 0 else { fail("auth \(a) open \(o) close \(c)") }
        let k = i % 2 == 0 ? before : derive()
        if i == 0 { continue }
        txn.append(t3 - t0)
        kdfs.append(k)
        diffs.append(t3 - t0 - k)
        auths.append(t2 - t1)
        rests.append((t1 - t0) + (t3 - t2))
        opens.append(tOpen - t2)
        closes.append(tClose - tOpen)
    }
    func q(_ values: [Double], _ p: Double) -> Int {
        let sorted = values.sorted()
        return Int((sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1e6).rounded())
    }
    print(
        "txn \(q(txn, 0.5)) kdf \(q(kdfs, 0.5)) diff \(q(diffs, 0.5)) diff_p10 \(q(diffs, 0.1))"
            + " diff_p90 \(q(diffs, 0.9)) auth \(q(auths, 0.5)) rest \(q(rests, 0.5))"
            + " open \(q(opens, 0.5)) close \(q(closes, 0.5))")
    exit(0)
}
