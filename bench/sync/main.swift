// bench-sync: what applying incoming sync records costs (ARCHITECTURE §12; issue 17's
// figure: 10,000 incoming records applied in at most 5 s), beside the floor set by the
// two primitives every record needs (an Ed25519 verification and an XChaCha20-Poly1305
// open of its key and body), measured alone over the same records.
//
//   swift run -c release bench-sync [COUNT]
//
// One run: COUNT records (default 10,000) written by device A, each a new item of about
// 100 bytes of attributes and a 32-byte secret; device B applies them in order.
import ArcaCrypto
import ArcaSync
import Foundation

struct Wall: ClockSource {
    func nowMillis() -> UInt64 { UInt64(Clock.monotonicSeconds() * 1000) + 1_700_000_000_000 }
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 10_000 : 10_000
let signerA = try SigningKey.generate()
let signerB = try SigningKey.generate()
let ids = try [DeviceID(signerA.publicKey), DeviceID(signerB.publicKey)]
let epochKey = try SecretBytes.random(count: 32)
var a = try SyncReplica(
    signer: signerA, circle: Circle(devices: ids, epoch: 0, key: epochKey), clock: HybridLogicalClock(source: Wall()))
var b = try SyncReplica(
    signer: signerB, circle: Circle(devices: ids, epoch: 0, key: epochKey), clock: HybridLogicalClock(source: Wall()))

let attributes = Array(String(repeating: "service=bench;account=someone@example.org;", count: 2).utf8)
var start = Clock.monotonicSeconds()
var records: [[UInt8]] = []
records.reserveCapacity(count)
for _ in 0..<count {
    let secret = try SecretBytes.random(count: 32)
    records.append(try a.create(RecordBody(attributes: attributes, secret: secret)).1.bytes)
}
let sealSeconds = Clock.monotonicSeconds() - start

start = Clock.monotonicSeconds()
for r in records { _ = try b.apply(r) }
let applySeconds = Clock.monotonicSeconds() - start
guard b.liveItems.count == count, b.stateDigest == a.stateDigest else {
    print("bench-sync: B did not converge with A")
    exit(1)
}

// The floor: verify and open each record with the primitives alone, no merge or bookkeeping.
let parsed = try records.map { try SyncRecord(parsing: $0) }
start = Clock.monotonicSeconds()
for r in parsed {
    guard r.signatureIsValid else { exit(1) }
    _ = try r.open(epochKey: epochKey)
}
let floorSeconds = Clock.monotonicSeconds() - start

func line(_ what: String, _ seconds: Double) {
    let total = String(format: "%8.3f s", seconds)
    let each = String(format: "%8.1f µs/record", seconds / Double(count) * 1e6)
    print("\(what.padding(toLength: 44, withPad: " ", startingAt: 0)) \(total) \(each)")
}
print("bench-sync: \(count) records of \(records[0].count) bytes")
line("A: seal, sign and chain (write)", sealSeconds)
line("B: apply (verify, open, chain, merge)", applySeconds)
line("floor: Ed25519 verify + AEAD open only", floorSeconds)
print(String(format: "apply %d records: %.2f s (target ≤ 5 s)", count, applySeconds))
