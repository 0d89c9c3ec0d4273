// bench-fleet fanout: N simulated host watchers (watch + verify + decrypt, no arcad), as
// arca-fleetd's agent does them (one etcdctl watch child each, the same HostVerifier),
// against the etcd cluster of bench/fleet/run.sh: the time for all of them to apply one
// `put`, and etcd's CPU and memory while they watch. Run by bench/fleet/run.sh.
import ArcaCrypto
import ArcaFleet
import Foundation

struct Arguments {
    var conf = ""
    var hosts = 200
    var etcdPids: [Int32] = []

    init() {
        var words = CommandLine.arguments.dropFirst().makeIterator()
        while let word = words.next() {
            switch word {
            case "--conf": conf = words.next() ?? ""
            case "--hosts": hosts = Int(words.next() ?? "") ?? 200
            case "--etcd-pids": etcdPids = (words.next() ?? "").split(separator: ",").compactMap { Int32($0) }
            default: break
            }
        }
    }
}

/// utime + stime in seconds, and VmRSS in KiB, of a process.
func usage(_ pid: Int32) -> (cpu: Double, rssKiB: Int) {
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
    let ticks = fields.count > 13 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let rss =
        status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    return (ticks / 100, rss)
}

/// VmRSS of this process's children (the etcdctl watch processes), in KiB.
func childrenRSS() -> Int {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { Int32($0) }.reduce(0) { total, pid in
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 2, Int32(fields[1]) == me else { return total }
        return total + usage(pid).rssKiB
    }
}

func now() -> Double { Date().timeIntervalSince1970 }

// @unchecked: the fields are touched only while `lock` is held.
final class Results: @unchecked Sendable {
    let lock = NSLock()
    var applied: [Double] = []
    var errors: [String] = []
    var restarts = 0
    func add(_ time: Double) {
        lock.lock()
        applied.append(time)
        lock.unlock()
    }
    func restarted() {
        lock.lock()
        restarts += 1
        lock.unlock()
    }
    func fail(_ text: String) {
        lock.lock()
        errors.append(text)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return applied.count + errors.count
    }
}

/// One simulated host, as the agent loop does it: read the manifest, apply what it lists
/// (verify + decrypt), else watch from the revision read; a watch that ends (no leader,
/// a member gone) means re-read and watch again.
func watcher(
    name: String, keys: HostKeys, admin: [UInt8], layout: FleetLayout, etcd: EtcdCtl, expected: String,
    results: Results, ready: DispatchGroup
) {
    let verifier = HostVerifier(host: name, adminKey: admin, keys: keys)
    var state = HostState()
    var waiting = true
    func started() {
        if waiting { ready.leave() }
        waiting = false
    }
    let deadline = now() + 300
    while now() < deadline {
        do {
            let read = try etcd.read([layout.manifest(name)])
            if let value = read[layout.manifest(name)] {
                let manifest = try verifier.manifest(value.value, state: state, now: Int64(now()))
                state.seq = manifest.seq
                if let entry = verifier.wanted(manifest, state: state).first {
                    let records = try etcd.read([layout.item(entry.id, entry.version), layout.groupKey("fan", 1, name)])
                    let plan = verifier.plan(
                        manifest, items: [entry.id: records[layout.item(entry.id, entry.version)]?.value ?? []],
                        groupKeys: ["fan/1": records[layout.groupKey("fan", 1, name)]?.value ?? []], state: state)
                    let secret = plan.apply.first?.secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                    if secret == expected { results.add(now()) } else { results.fail("\(name): \(plan.errors)") }
                    started()
                    return
                }
            }
            let watch = try etcd.watch(layout.manifest(name), fromRevision: read.revision + 1)
            started()
            var event = EtcdWatchEvent.idle
            while event == .idle && now() < deadline { event = watch.next(timeoutMilliseconds: 1000) }
            watch.cancel()
            if case .ended = event {
                results.restarted()
                Thread.sleep(forTimeInterval: 0.2)
            }
        } catch {
            // etcd busy or electing a leader: the agent retries at its next pass, so does this.
            results.restarted()
            Thread.sleep(forTimeInterval: 0.5)
        }
    }
    started()
    results.fail("\(name): timed out")
}

let arguments = Arguments()
do {
    let config = try FleetConfig.load(arguments.conf)
    let etcd = EtcdCtl(config.etcd)
    let layout = config.keys
    let admin = FleetAdmin(etcd: etcd, layout: layout, vault: SystemVault(socket: config.socket))
    let adminKey = try admin.initialize(manifestLifetime: 3600)
    let pinned = Array(Data(base64Encoded: adminKey) ?? Data())
    let names = (0..<arguments.hosts).map { "sim\($0)" }
    let keys = try names.map { _ in try HostKeys(stored: try HostKeys.generateStored()) }
    let joins = try zip(names, keys).map { name, host in
        EtcdWrite.put(
            layout.join(name),
            try SignedRecord.sign(host.joinRecord(host: name), kind: .join, seed: host.signSeed).encoded())
    }
    for start in stride(from: 0, to: joins.count, by: 100) {
        _ = try etcd.transaction([], Array(joins[start..<min(start + 100, joins.count)]))
    }
    var t = now()
    try admin.approve(names, groups: ["fan"])
    print("approve of \(names.count) hosts in one write: \(String(format: "%.2f", now() - t)) s")

    let results = Results()
    let ready = DispatchGroup()
    t = now()
    for (name, host) in zip(names, keys) {
        ready.enter()
        let thread = Thread {
            watcher(
                name: name, keys: host, admin: pinned, layout: layout, etcd: etcd, expected: "fan-out-secret",
                results: results, ready: ready)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    ready.wait()
    print("\(names.count) watchers started in \(String(format: "%.1f", now() - t)) s")
    let before = arguments.etcdPids.map(usage)
    let idleSeconds = 5.0
    Thread.sleep(forTimeInterval: idleSeconds)
    let idle = arguments.etcdPids.map(usage)
    let idleCPU = zip(before, idle).map { $1.cpu - $0.cpu }.reduce(0, +)
    let watcherRSS = childrenRSS()

    var bytes = Array("fan-out-secret".utf8)
    let secret = try SecretBytes(consuming: &bytes)
    let t0 = now()
    _ = try admin.put(
        service: "bench", account: "fan", group: "fan", grants: FleetGrants(), secret: secret, rotate: false)
    let written = now() - t0
    while results.count < names.count && now() - t0 < 180 { Thread.sleep(forTimeInterval: 0.05) }
    let after = arguments.etcdPids.map(usage)
    let changeCPU = zip(idle, after).map { $1.cpu - $0.cpu }.reduce(0, +)
    let times = results.applied.map { $0 - t0 }.sorted()
    func pct(_ p: Double) -> String {
        times.isEmpty ? "-" : String(format: "%.2f s", times[min(times.count - 1, Int(Double(times.count) * p))])
    }
    print("put (1 item + \(names.count) manifests, one transaction): \(String(format: "%.2f", written)) s")
    print(
        "applied by \(times.count)/\(names.count) watchers: p50 \(pct(0.5)), p90 \(pct(0.9)), all \(pct(1.0)) after the put started"
    )
    print("watches or reads that failed (no leader, leader changed) and were retried: \(results.restarts)")
    if !results.errors.isEmpty { print("errors: \(results.errors.prefix(3)) (\(results.errors.count))") }
    print(
        String(
            format: "etcd (3 members) while %d watchers wait: CPU %.2f s over %.0f s; RSS %@ MiB",
            names.count, idleCPU, idleSeconds, idle.map { String($0.rssKiB / 1024) }.joined(separator: " + ")))
    print(
        String(
            format: "etcd CPU during the change: %.2f s; watchers' etcdctl children: %d MiB RSS in all",
            changeCPU, watcherRSS / 1024))
} catch {
    print("bench-fleet: \(error)")
    exit(1)
}
