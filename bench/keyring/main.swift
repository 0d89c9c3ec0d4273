// bench-keyring: the figures of issue 4, one run, one table.
//
//   install 1,000 items      KeyringLayout.install (build a ring, swap it into @u)
//   lock 1,000 items         KeyringLayout.remove: syscall time, and time until gone from /proc/keys
//   read one item            KeyringReader (search + read) beside the raw keyutils C calls
//   keyctl print             a whole process, the floor for any CLI read
//   lock under a flood       remove 1,000 items of one uid while another uid floods puts (issue 13)
//   root headroom            root's quota left after one uid filled its budget, against the reserve
//
// Runs as root. Items go to a synthetic uid (no account needed: the kernel keys
// user keyrings by number) that is purged at the end.
import ArcaCrypto
import ArcaKeyring
import CKeyutils
import Foundation
import Synchronization

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func now() -> Double { Clock.monotonicSeconds() }

func procKeys() -> Set<Int32> {
    guard let text = try? String(contentsOfFile: "/proc/keys", encoding: .utf8) else { return [] }
    return Set(
        text.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.flatMap { UInt32($0, radix: 16) }.map { Int32(bitPattern: $0) }
        })
}

guard getuid() == 0 else {
    FileHandle.standardError.write("bench-keyring: must run as root\n".data(using: .utf8) ?? Data())
    exit(1)
}

let uid = UInt32(3_900_000 + Int.random(in: 0..<99_999))
let flooder = uid + 100_000
let budgetFiller = uid + 200_000
let layout = KeyringLayout()

func runBench() throws {
    let items = try (0..<1_000).map { i in
        KeyringItem(
            key: .genericPassword(GenericPasswordKey(service: "bench", account: "a\(i)")),
            secret: try SecretBytes.random(count: 32))
    }

    // Install 1,000 items into an empty class (unlock), five times.
    var installs: [Double] = []
    for _ in 0..<5 {
        // Lock first and let the kernel's garbage collector finish, as between a real lock and unlock.
        if let ring = try layout.ring(user: uid, class: .whenUnlocked) {
            let serials = Set([ring.rawValue] + (try ring.links().map(\.rawValue)))
            _ = try layout.remove(user: uid, class: .whenUnlocked)
            let waitStart = now()
            while !procKeys().isDisjoint(with: serials) && now() - waitStart < 2 { usleep(200) }
        }
        let start = now()
        let report = try layout.install(user: uid, class: .whenUnlocked, items: items)
        installs.append(now() - start)
        guard report.loaded == 1_000 else { throw KeyringError.procfs(path: "install loaded \(report.loaded)") }
    }
    // Replace 1,000 items by 1,000 (install, then invalidate the old ring and its keys).
    var replaces: [Double] = []
    for _ in 0..<5 {
        let start = now()
        _ = try layout.install(user: uid, class: .whenUnlocked, items: items)
        replaces.append(now() - start)
    }
    // The peer: the same 2,000 keyutils calls (add_key + keyctl_setperm) made directly from C.
    var rawInstalls: [Double] = []
    let payload = try SecretBytes.random(count: 32)
    let descriptions = items.map(\.key.keyDescription)
    for _ in 0..<5 {
        let start = now()
        let ring = add_key("keyring", "arca:bench", nil, 0, KEY_SPEC_THREAD_KEYRING)
        _ = keyctl_setperm(ring, KeyringLayout.ringPermissions.rawValue)
        payload.withUnsafeBytes { bytes in
            for description in descriptions {
                let key = add_key("user", description, bytes.baseAddress, bytes.count, ring)
                _ = keyctl_setperm(key, KeyringLayout.itemPermissions.rawValue)
            }
        }
        rawInstalls.append(now() - start)
        let serials = Set([ring] + (try KeySerial(rawValue: ring).links().map(\.rawValue)))
        for key in try KeySerial(rawValue: ring).links() { try? key.invalidate() }
        _ = keyctl_invalidate(ring)
        let waitStart = now()
        while !procKeys().isDisjoint(with: serials) && now() - waitStart < 2 { usleep(200) }
    }

    // Lock 1,000 items, five times: the syscalls, then until /proc/keys no longer lists them.
    var lockCalls: [Double] = []
    var lockGone: [Double] = []
    for _ in 0..<5 {
        let report = try layout.install(user: uid, class: .whenUnlocked, items: items)
        let serials = Set([report.ring.rawValue] + (try report.ring.links().map(\.rawValue)))
        let start = now()
        _ = try layout.remove(user: uid, class: .whenUnlocked)
        lockCalls.append(now() - start)
        while !procKeys().isDisjoint(with: serials) && now() - start < 2 { usleep(200) }
        lockGone.append(now() - start)
    }

    // The cost of one switch to the user's real uid (the forked child).
    var switches: [Double] = []
    for _ in 0..<20 {
        let start = now()
        _ = try layout.ring(user: uid, class: .afterFirstUnlock)
        switches.append(now() - start)
    }

    // Reads: the ring of the synthetic user is linked into our process keyring, so
    // this process possesses the item as its owner's processes do.
    let report = try layout.install(user: uid, class: .whenUnlocked, items: items)
    try report.ring.link(into: .processKeyring)
    defer { try? report.ring.unlink(from: .processKeyring) }
    let key = KeyringItemKey.genericPassword(GenericPasswordKey(service: "bench", account: "a500"))
    let description = key.keyDescription
    let reader = KeyringReader()
    let buffer = try SecretBytes(count: 64)
    let rounds = 20_000
    var libraryInto: [Double] = []
    var libraryAlloc: [Double] = []
    var raw: [Double] = []
    var stack = [CChar](repeating: 0, count: 64)
    for _ in 0..<rounds {
        var start = now()
        _ = try reader.read(key, into: buffer)
        libraryInto.append(now() - start)

        start = now()
        _ = try reader.read(key)
        libraryAlloc.append(now() - start)

        start = now()
        let id = keyctl_search(KEY_SPEC_PROCESS_KEYRING, "user", description, 0)
        let length = stack.withUnsafeMutableBufferPointer { keyctl_read(Int32(id), $0.baseAddress, 64) }
        raw.append(now() - start)
        guard id > 0, length == 32 else { throw KeyringError.procfs(path: "raw read failed") }
    }
    stack = [CChar](repeating: 0, count: 64)

    // The floor: a whole keyctl process reading the item.
    let serial = try reader.find(key)
    // posix_spawn directly: Foundation's Process adds tens of milliseconds here.
    var prints: [Double] = []
    let argv = ["keyctl", "pipe", String(serial.rawValue)]
    for _ in 0..<30 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        var cArgs = argv.map { strdup($0) } + [nil]
        var pid: pid_t = 0
        let start = now()
        let spawned = posix_spawn(&pid, "/usr/bin/keyctl", &actions, nil, &cArgs, environ)
        var status: Int32 = 0
        while spawned == 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        prints.append(now() - start)
        cArgs.forEach { free($0) }
        posix_spawn_file_actions_destroy(&actions)
        guard spawned == 0, status == 0 else { throw KeyringError.procfs(path: "keyctl pipe failed") }
    }

    // Lock 1,000 items of one uid while another uid floods adds (replacing 100 items
    // in a loop, each a staged add + chown + setperm + link + invalidate).
    let stopFlood = Atomic(false)
    let floodPuts = Atomic(0)
    try layout.install(user: flooder, class: .whenUnlocked, items: [])
    let floodItems = try (0..<100).map { i in
        KeyringItem(
            key: .genericPassword(GenericPasswordKey(service: "flood", account: "f\(i)")),
            secret: try SecretBytes.random(count: 1_024))
    }
    let floodThread = Thread {
        var i = 0
        while !stopFlood.load(ordering: .relaxed) {
            _ = try? layout.put(item: floodItems[i % floodItems.count], user: flooder, class: .whenUnlocked)
            floodPuts.add(1, ordering: .relaxed)
            i += 1
        }
    }
    floodThread.start()
    var floodedLocks: [Double] = []
    for _ in 0..<5 {
        _ = try layout.install(user: uid, class: .whenUnlocked, items: items)
        let start = now()
        _ = try layout.remove(user: uid, class: .whenUnlocked)
        floodedLocks.append(now() - start)
    }
    stopFlood.store(true, ordering: .relaxed)
    while !floodThread.isFinished { usleep(1_000) }
    layout.purge(user: flooder)

    // One uid at its budget: 32 KB items until the budget stops them; then root's
    // headroom must stay above the reserve arcad leaves to everything else.
    let large = try (0..<200).map { i in
        KeyringItem(
            key: .genericPassword(GenericPasswordKey(service: "fill", account: "b\(i)")),
            secret: try SecretBytes.random(count: 32_000))
    }
    let filled = try layout.install(user: budgetFiller, class: .whenUnlocked, items: large)
    let root = try KeyQuota.root()
    let share = layout.budget.rootSharePercent
    let reserveBytes = root.maximumBytes / 100 * (100 - share)
    let reserveKeys = root.maximumKeys / 100 * (100 - share)
    layout.purge(user: budgetFiller)

    func ms(_ seconds: Double) -> String { String(format: "%8.2f ms", seconds * 1_000) }
    func us(_ seconds: Double) -> String { String(format: "%8.2f µs", seconds * 1_000_000) }
    let rawMedian = median(raw)
    let pad = { (s: String) in s.padding(toLength: 46, withPad: " ", startingAt: 0) }
    print("kernel keyring bench (median; reads over \(rounds) rounds)")
    print(pad("measurement") + "      Arca      peer / target")
    print(
        pad("install 1,000 items (build + swap into @u)") + ms(median(installs))
            + "   raw C add_key+setperm ×1,000 \(ms(median(rawInstalls)).trimmingCharacters(in: .whitespaces)); target ≤ 20 ms"
    )
    print(pad("replace 1,000 by 1,000 (+ invalidate old)") + ms(median(replaces)))
    print(pad("lock 1,000 items: syscalls") + ms(median(lockCalls)) + "   target ≤ 10 ms")
    print(pad("lock 1,000 items: gone from /proc/keys") + ms(median(lockGone)))
    print(pad("  of which: child with the user's real uid") + ms(median(switches)))
    print(
        pad("read one item, into a SecretBytes buffer") + us(median(libraryInto))
            + "   raw C keyctl_search+keyctl_read \(us(rawMedian).trimmingCharacters(in: .whitespaces))"
            + String(format: " (%.2f×, target ≤ 1.5×)", median(libraryInto) / rawMedian))
    print(
        pad("read one item, into new SecretBytes") + us(median(libraryAlloc))
            + String(format: "   (%.2f× raw; sodium_malloc + mlock per secret)", median(libraryAlloc) / rawMedian))
    print(pad("whole process: keyctl pipe <id>") + us(median(prints)) + "   (floor for a CLI read)")
    print(
        pad("lock 1,000 items while another uid floods") + ms(median(floodedLocks))
            + "   max \(ms(floodedLocks.max() ?? 0).trimmingCharacters(in: .whitespaces)), "
            + "\(floodPuts.load(ordering: .relaxed)) flood puts meanwhile; unflooded \(ms(median(lockCalls)).trimmingCharacters(in: .whitespaces))"
    )
    print(
        pad("one uid at its budget (32 KB items)") + String(format: "%8d of", filled.loaded)
            + " 200 loaded (budget \(layout.budget.bytesPerUser) bytes, \(layout.budget.keysPerUser) keys)")
    let headroomOK = root.headroomBytes > reserveBytes && root.headroomKeys > reserveKeys
    print(
        pad("root's quota headroom after that") + String(format: "%8d B", root.headroomBytes)
            + ", \(root.headroomKeys) keys; reserve \(reserveBytes) B, \(reserveKeys) keys: "
            + (headroomOK ? "above the reserve" : "BELOW THE RESERVE"))
}

do {
    layout.purge(user: uid)
    try runBench()
    layout.purge(user: uid)
} catch {
    for synthetic in [uid, flooder, budgetFiller] { layout.purge(user: synthetic) }
    FileHandle.standardError.write("bench-keyring: \(error)\n".data(using: .utf8) ?? Data())
    exit(1)
}
