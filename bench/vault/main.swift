// bench-vault: the figures of issue 3, printed as one table.
//
// With 1,000, 10,000 and 100,000 generic-password items of 64-byte secrets: add
// one item (median, each add its own synced transaction), get by primary key
// (median), query by service (10 matches, and all items), unlock excluding the
// KDF, bytes on disk per item, peak RSS. The peer column is gnome-keyring on this
// machine, which rewrites its whole file on every store.
import ArcaCrypto
import ArcaSystem
import ArcaVault

#if canImport(Glibc)
    import Glibc
#endif

func die(_ message: String) -> Never {
    try? FileDescriptor.standardError.writeAll("bench-vault: \(message)\n")
    exit(1)
}

func must<T>(_ body: () throws -> T) -> T {
    do { return try body() } catch { die("\(error)") }
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? 0 : s[s.count / 2]
}

func time(_ body: () throws -> Void) rethrows -> Double {
    let start = Clock.monotonicSeconds()
    try body()
    return Clock.monotonicSeconds() - start
}

func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}

func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Median time to write 4 KiB and fdatasync it in the bench directory: the floor
/// under every durable add (one WAL sync per transaction), which varies with the disk.
func fsyncLatency() -> Double {
    let path = "\(directory)/fsync-probe"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return 0 }
    defer {
        close(fd)
        unlink(path)
    }
    let page = [UInt8](repeating: 0x5a, count: 4096)
    var times: [Double] = []
    for _ in 0..<50 {
        times.append(
            time {
                _ = page.withUnsafeBytes { write(fd, $0.baseAddress, 4096) }
                fdatasync(fd)
            })
    }
    return median(times)
}

func attributes(_ i: Int) -> ItemAttributes {
    var a = ItemAttributes()
    a.service = "service-\(i / 10)"  // 10 items per service
    a.account = "account-\(i)"
    a.accessGroup = "group"
    a.label = "label \(i)"
    return a
}

func fmt(_ seconds: Double) -> String {
    seconds < 1e-3 ? "\(Int((seconds * 1e6).rounded())) µs" : "\(Double(Int(seconds * 1e4)) / 10) ms"
}

struct Figures {
    var fsync = "", addFastest = "", add = "", get = "", queryService = "", queryAll = "", unlock = "", bytes = "",
        rss = ""
}

let directory: String = {
    var template = Array("/tmp/bench-vault.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { die("mkdtemp failed") }
    return String(cString: made)
}()
let password = must { try SecretBytes.random(count: 16) }
let secret64 = must { try SecretBytes.random(count: 64) }
// The 64 MiB floor with one pass: the KDF is excluded from every figure anyway.
let kdf = KDFParameters(opsLimit: 1, memoryLimit: KDFParameters.memoryFloor, salt: SecureRandom.bytes(count: 16))

func run(items n: Int) -> Figures {
    let path = "\(directory)/vault-\(n).db"
    var f = Figures()
    let vault = must { try Vault.create(at: path, password: password, kdfParameters: kdf).vault }
    must {
        var i = 0
        while i < n {
            try vault.batch {
                for j in i..<min(n, i + 2000) {
                    try vault.add(.genericPassword, attributes: attributes(j), secret: secret64)
                }
            }
            i += 2000
        }
    }
    // Flush the bulk fill to disk first: on ext4 (data=ordered) the first fsync after it
    // would otherwise wait for ~n × 800 bytes of unrelated writeback, which measures the
    // import, not an add to a vault of n items.
    sync()
    // Add: 200 single adds on top of n items (removed afterwards so later figures see n).
    var adds: [Double] = []
    for k in 0..<200 {
        adds.append(
            must { try time { try vault.add(.genericPassword, attributes: attributes(n + k), secret: secret64) } })
    }
    f.add = fmt(median(adds))
    f.addFastest = fmt(adds.min() ?? 0)
    f.fsync = fmt(fsyncLatency())
    must {
        for k in 0..<200 {
            var q = Query(.genericPassword)
            q.attributes.account = "account-\(n + k)"
            q.attributes.service = "service-\((n + k) / 10)"
            try vault.delete(q)
        }
    }
    // Get by primary key, returning the secret.
    var gets: [Double] = []
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
        let i = Int.random(in: 0..<n, using: &generator)
        var a = ItemAttributes()
        a.service = "service-\(i / 10)"
        a.account = "account-\(i)"
        a.accessGroup = "group"
        let q = Query(.genericPassword, attributes: a, returnData: true)
        gets.append(must { try time { _ = try vault.copyMatching(q) } })
    }
    f.get = fmt(median(gets))
    var byService: [Double] = []
    for _ in 0..<200 {
        var a = ItemAttributes()
        a.service = "service-\(Int.random(in: 0..<(n / 10), using: &generator))"
        let q = Query(.genericPassword, attributes: a, matchLimit: .all, returnAttributes: true)
        byService.append(must { try time { _ = try vault.copyMatching(q) } })
    }
    f.queryService = fmt(median(byService))
    let all = Query(.genericPassword, matchLimit: .all, returnAttributes: true)
    f.queryAll = fmt(must { try time { _ = try vault.copyMatching(all) } })
    // Unlock excluding the KDF: open the file and load the class keys from a derived key.
    let derived = must { try Argon2id.deriveKey(password: password, parameters: vault.kdfParameters) }
    var unlocks: [Double] = []
    for _ in 0..<20 {
        unlocks.append(
            must {
                try time {
                    let v = try Vault.open(at: path)
                    try v.unlock(derivedKey: derived)
                }
            })
    }
    f.unlock = fmt(median(unlocks))
    f.rss = "\(Int(peakRSSMiB())) MiB"
    return f
}

let sizes =
    CommandLine.arguments.count > 1
    ? CommandLine.arguments.dropFirst().compactMap { Int($0) } : [1_000, 10_000, 100_000]
var results: [Figures] = []
for n in sizes {
    try? FileDescriptor.standardError.writeAll("bench-vault: \(n) items…\n")
    var figures = run(items: n)
    // Measured after the vault is closed, which checkpoints the WAL into the database.
    let path = "\(directory)/vault-\(n).db"
    figures.bytes = "\((fileSize(path) + fileSize(path + "-wal")) / n) B"
    results.append(figures)
}

let rows: [(String, KeyPath<Figures, String>, String, String)] = [
    ("add one item (median)", \.add, "≤ 1 ms, flat", "15 ms @100 → 37 ms @1,000"),
    ("add one item (fastest of 200)", \.addFastest, "—", "—"),
    ("4 KiB write + fdatasync here (median)", \.fsync, "—", "—"),
    ("get by primary key (median)", \.get, "≤ 100 µs @100k", "—"),
    ("query by service (10 matches, median)", \.queryService, "—", "—"),
    ("query all items (attributes)", \.queryAll, "—", "—"),
    ("unlock excluding KDF (median)", \.unlock, "≤ 50 ms @10k", "—"),
    ("bytes on disk per item", \.bytes, "—", "—"),
    ("peak RSS (process, cumulative)", \.rss, "—", "—"),
]
func pad(_ s: String, _ width: Int) -> String { s + String(repeating: " ", count: max(0, width - s.count)) }
func thousands(_ n: Int) -> String {
    let digits = Array(String(n))
    return String(digits.enumerated().flatMap { i, c in (i > 0 && (digits.count - i) % 3 == 0) ? [",", c] : [c] })
}
let header = ["figure"] + sizes.map { "\(thousands($0)) items" } + ["target", "gnome-keyring (peer)"]
var table = [header] + rows.map { row in [row.0] + results.map { $0[keyPath: row.1] } + [row.2, row.3] }
let widths = (0..<header.count).map { c in table.map { $0[c].count }.max() ?? 0 }
for (i, line) in table.enumerated() {
    print(line.enumerated().map { pad($0.element, widths[$0.offset]) }.joined(separator: " | "))
    if i == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-")) }
}
print("64-byte secrets; Argon2id excluded (unlock is from a derived key); files in \(directory) (removed).")
for n in sizes {
    for suffix in ["", "-wal", "-shm"] { unlink("\(directory)/vault-\(n).db\(suffix)") }
}
rmdir(directory)
