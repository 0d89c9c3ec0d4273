import ArcaCrypto
import ArcaTestSupport
import Foundation
import Synchronization
import Testing

@testable import ArcaKeyring

extension KeyringRootTests {
    /// The uid lines of every thread of this process, from /proc/self/task/*/status.
    func threadUidLines() throws -> [String] {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        return tasks.compactMap { task in
            ProcFile.read("/proc/self/task/\(task)/status")?.split(separator: "\n")
                .first { $0.hasPrefix("Uid:") }.map(String.init)
        }
    }

    @Test("root: acting as the user never changes this process's credentials, on any thread")
    func credentialsUntouched() throws {
        try withTwoUsers { owner, _ in
            let stop = Atomic(false)
            let seen = Mutex<Set<String>>([])
            let watcher = Thread {
                while !stop.load(ordering: .relaxed) {
                    let lines = (try? self.threadUidLines()) ?? []
                    seen.withLock { $0.formUnion(lines) }
                }
            }
            watcher.start()
            for _ in 0..<50 {
                try layout.install(
                    user: owner.uid, class: .whenUnlocked, items: [try testItem(service: "m", account: "a")])
            }
            stop.store(true, ordering: .relaxed)
            usleep(50_000)
            #expect(getuid() == 0)
            #expect(geteuid() == 0)
            #expect(seen.withLock { $0 } == ["Uid:\t0\t0\t0\t0"])
        }
    }

    @Test("root: concurrent installs from many threads leave exactly one complete ring per user")
    func concurrentInstalls() throws {
        try withTwoUsers { first, second in
            let users = [first, second]
            let reports = Mutex<[(UInt32, KeySerial)]>([])
            let failures = Atomic(0)
            DispatchQueue.concurrentPerform(iterations: 16) { i in
                let user = users[i % 2]
                do {
                    let items = try (0..<20).map { try testItem(service: "c\(i)", account: "a\($0)") }
                    let report = try layout.install(user: user.uid, class: .whenUnlocked, items: items)
                    reports.withLock { $0.append((user.uid, report.ring)) }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
            #expect(failures.load(ordering: .relaxed) == 0)
            let all = reports.withLock { $0 }
            #expect(all.count == 16)
            for user in users {
                let current = try #require(try layout.ring(user: user.uid, class: .whenUnlocked))
                #expect(try current.links().count == 20)
                // Every other ring made for this user is dead.
                for (uid, ring) in all where uid == user.uid && ring != current {
                    #expect(throws: KeyringErrno.self) { try ring.describe() }
                }
            }
            #expect(try KeySerial.threadKeyring.links().isEmpty)
        }
    }
}
